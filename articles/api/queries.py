"""The API's query strings: each operation's parameters, checked as the store checks them."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext
from rest_framework import serializers

from articles import conf, validation
from articles.api.fields import (
    LineField,
)
from articles.api.serializers import _cleaned
from articles.types import Order, Period, SearchOrder


class QuerySerializer(serializers.Serializer):
    """Query parameters: an empty value (`?page=`) is refused like any invalid one, where
    DRF would take it as absent; the schema allows no empty value."""

    def to_internal_value(self, data: Any) -> Any:
        blank = {
            name: [gettext("This field may not be blank.")]
            for name, field in self.fields.items()
            if hasattr(data, "getlist")
            and "" in data.getlist(name)
            and not getattr(field, "allow_blank", False)
        }
        if blank:
            raise serializers.ValidationError(blank, code="blank")
        return super().to_internal_value(data)


class ReasonQuerySerializer(QuerySerializer):
    reason = LineField(
        required=False, allow_blank=True, default="", max_length=validation.REASON_MAX
    )

    def validate_reason(self, value: str) -> str:
        return _cleaned(validation.clean_reason, value)


def _clean_page(value: str) -> int:
    return _cleaned(validation.clean_page, value, conf.max_page())


class PageQuerySerializer(QuerySerializer):
    page = serializers.CharField(required=False, default="1")

    def validate_page(self, value: str) -> int:
        return _clean_page(value)


class ListQuerySerializer(PageQuerySerializer):
    order = serializers.ChoiceField(
        choices=[o.value for o in Order], required=False, default=Order.SCORE.value
    )

    def validate_order(self, value: str) -> Order:
        return Order(value)


# The orders' values, and `time` (newest), the word the article lists use for it.
SEARCH_ORDERS = [*(o.value for o in SearchOrder), "time"]


class SearchQuerySerializer(PageQuerySerializer):
    # Blank and over-long queries reach the store's own rules, which answer 400 naming q.
    q = serializers.CharField(allow_blank=True, trim_whitespace=False)
    order = serializers.ChoiceField(
        choices=SEARCH_ORDERS, required=False, default=SearchOrder.SCORE.value
    )
    period = serializers.ChoiceField(
        choices=[p.value for p in Period], required=False, default=Period.ALL.value
    )
    group = serializers.CharField(required=False, default="")

    def validate_order(self, value: str) -> SearchOrder:
        return SearchOrder.from_word(value) or SearchOrder.SCORE  # a choice: always one

    def validate_period(self, value: str) -> Period:
        return Period(value)


class CommentSearchQuerySerializer(PageQuerySerializer):
    # Blank and over-long queries reach the store's own rules, which answer 400 naming q.
    q = serializers.CharField(allow_blank=True, trim_whitespace=False)
    period = serializers.ChoiceField(
        choices=[p.value for p in Period], required=False, default=Period.ALL.value
    )

    def validate_period(self, value: str) -> Period:
        return Period(value)


class TopQuerySerializer(PageQuerySerializer):
    period = serializers.ChoiceField(
        choices=[p.value for p in Period], required=False, default=Period.ALL.value
    )

    def validate_period(self, value: str) -> Period:
        return Period(value)


class StatsQuerySerializer(QuerySerializer):
    days = serializers.IntegerField(required=False, default=30, min_value=1, max_value=366)


class GoodQuerySerializer(PageQuerySerializer):
    date = serializers.DateField(required=False, input_formats=["%Y-%m-%d"])
