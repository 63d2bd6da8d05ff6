"""Baseline B models: articles, one vote per user per article, group membership."""

from __future__ import annotations

from django.db import models


class Group(models.Model):
    name = models.SlugField(max_length=64, unique=True)
    description = models.TextField(blank=True)

    def __str__(self) -> str:
        return self.name


class Article(models.Model):
    title = models.CharField(max_length=300)
    link = models.URLField(max_length=2000, blank=True)
    text = models.TextField(blank=True)
    poster_id = models.BigIntegerField()
    poster_name = models.CharField(max_length=150)
    posted = models.FloatField()  # Unix seconds, like the store
    votes = models.IntegerField(default=1)
    downvotes = models.IntegerField(default=0)
    score = models.FloatField()
    groups = models.ManyToManyField(Group, related_name="articles", blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["-score"], name="ormsite_score"),
            models.Index(fields=["-posted"], name="ormsite_posted"),
            models.Index(fields=["votes", "-posted"], name="ormsite_good"),
        ]

    def __str__(self) -> str:
        return self.title


class Vote(models.Model):
    article = models.ForeignKey(Article, on_delete=models.CASCADE, related_name="vote_set")
    user_id = models.BigIntegerField()
    value = models.SmallIntegerField()  # 1 up, -1 down

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["article", "user_id"], name="ormsite_one_vote")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} on {self.article_id}: {self.value}"
