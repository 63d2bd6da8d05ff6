"""The committed schema, read by a real JSON Schema validator: what the server takes in a
request body validates against it, and no oneOf takes one value in two branches (which
makes a validating client refuse that value)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.settings import patched_settings
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4
from rest_framework import serializers

from articles.api.openapi_settings import SCHEMA_SETTINGS

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"

# What a fuzzer tries first: one value of each JSON type, and the edge strings.
PROBES: list[Any] = ["", "a", " ", 0, 1, -1, 1.5, None, True, False, [], {}, ["a"], {"a": "a"}]


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0's schema object as JSON Schema: `nullable` adds null to the type."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _json_schema(value) for key, value in node.items() if key != "nullable"}
    if node.get("nullable") is True:
        if "type" in out:
            out["type"] = [out["type"], "null"]
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


DOCUMENT = _json_schema(yaml.safe_load(SCHEMA_FILE.read_text()))
REGISTRY: Registry = Registry().with_resource(
    "openapi.yaml", Resource.from_contents(DOCUMENT, default_specification=DRAFT4)
)


def _validator(pointer: str) -> jsonschema.Draft4Validator:
    """A validator of the schema at a JSON pointer of the committed document."""
    return jsonschema.Draft4Validator(
        {"$ref": f"openapi.yaml#{pointer}"},
        registry=REGISTRY,
        format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER,
    )


def _one_ofs(node: Any, pointer: str = "") -> Iterator[tuple[str, list[Any]]]:
    if isinstance(node, dict):
        if isinstance(node.get("oneOf"), list):
            yield pointer, node["oneOf"]
        for key, value in node.items():
            yield from _one_ofs(value, f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _one_ofs(value, f"{pointer}/{index}")


def test_the_schema_has_one_of_branches_to_check():
    assert any(True for _ in _one_ofs(DOCUMENT))


@pytest.mark.parametrize("probe", PROBES, ids=repr)
def test_no_one_of_takes_a_value_in_two_branches(probe):
    """A value two branches take fails the oneOf: a validating client refuses it."""
    overlapping = []
    for pointer, branches in _one_ofs(DOCUMENT):
        taking = [
            i for i in range(len(branches)) if _validator(f"{pointer}/oneOf/{i}").is_valid(probe)
        ]
        if len(taking) > 1:
            overlapping.append((pointer, taking))
    assert overlapping == []


# --- request bodies: what the server takes, the schema takes --------------------------------


def _request_components() -> dict[str, serializers.Serializer]:
    """Each component of the committed schema that some operation takes as its request
    body, with the serializer drf-spectacular made it from."""
    with patched_settings(SCHEMA_SETTINGS):
        generator = SchemaGenerator()
        generator.get_schema(request=None, public=True)
    bodies = {
        media["schema"]["$ref"].rsplit("/", 1)[-1]
        for operations in DOCUMENT["paths"].values()
        for operation in operations.values()
        if isinstance(operation, dict)
        for media in operation.get("requestBody", {}).get("content", {}).values()
    }
    found = {}
    for component in generator.registry._components.values():
        if component.type == "schemas" and component.name in bodies:
            made = component.object
            found[component.name] = made if isinstance(made, serializers.Serializer) else made()
    assert set(found) == bodies
    return found


def _server_takes(serializer: serializers.Serializer, name: str, value: Any) -> bool:
    """Whether the field, and its serializer's validate_<name>, take the value."""
    field = serializer.fields[name]
    try:
        internal = field.run_validation(value)
        check = getattr(serializer, f"validate_{field.field_name}", None)
        if check is not None:
            check(internal)
    except serializers.ValidationError:
        return False
    return True


def _field_cases() -> Iterator[Any]:
    for component, serializer in sorted(_request_components().items()):
        for name, field in serializer.fields.items():
            if not field.read_only:
                yield pytest.param(component, serializer, name, id=f"{component}.{name}")


SAMPLES = [*PROBES, "https://example.org/a", " https://example.org/a", "up", "redis"]
SAMPLES += ["Some title", "\rb", "a\x00", ["redis"], ["Redis"]]
# Links the submit page takes: a path in its own script, every port up to 65535.
SAMPLES += ["https://de.wikipedia.org/wiki/Straße", "http://example.org:65535/", "http://a.b:0/"]


@pytest.mark.django_db
@pytest.mark.parametrize(("component", "serializer", "name"), list(_field_cases()))
def test_every_value_the_server_takes_in_a_request_field_fits_the_schema(
    component, serializer, name
):
    """Ensure a validating client can send each value the server takes (e.g. "" for a
    link or a reason): each probe the field takes validates against the field's schema."""
    validator = _validator(f"/components/schemas/{component}/properties/{name}")
    refused = [
        value
        for value in SAMPLES
        if _server_takes(serializer, name, value) and not validator.is_valid(value)
    ]
    assert refused == []


@pytest.mark.django_db
@pytest.mark.parametrize(("component", "serializer", "name"), list(_field_cases()))
def test_every_value_a_request_field_schema_takes_the_server_takes(component, serializer, name):
    """The other way round, field by field (rules across fields, requests or the store
    are beyond a field's schema: tests/api/schemathesis.toml): each probe that validates
    against the field's schema, the field takes."""
    validator = _validator(f"/components/schemas/{component}/properties/{name}")
    refused = [
        value
        for value in SAMPLES
        if validator.is_valid(value) and not _server_takes(serializer, name, value)
    ]
    assert refused == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/groups/", {"name": "redis", "description": "\rb"}, "description"),
        ("/api/groups/", {"name": "redis", "description": "Redis\n"}, "description"),
        ("/api/articles/", {"title": "T", "link": " ", "text": "x"}, "link"),
        ("/api/articles/", {"title": "T\x00", "link": "https://example.org/"}, "title"),
    ],
)
def test_a_value_the_schema_refuses_is_refused_as_sent_not_as_trimmed(
    as_staff, anon, path, body, field
):
    """The server matched its patterns after trimming, so took "\\rb" as "b" and " " as "",
    which the schema refuses; now a 400 naming the field, and nothing is made."""
    response = as_staff.post(path, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["field"] == field
    assert anon.get("/api/groups/").json() == []
    assert anon.get("/api/articles/").json()["count"] == 0


@pytest.mark.django_db
def test_the_search_query_schema_refuses_the_empty_query_the_server_refuses(anon):
    assert anon.get("/api/articles/search/", {"q": ""}).status_code == 400
    operation = DOCUMENT["paths"]["/api/articles/search/"]["get"]
    (q,) = [p for p in operation["parameters"] if p["name"] == "q"]
    assert not jsonschema.Draft4Validator(q["schema"]).is_valid("")


@pytest.mark.django_db
def test_the_api_takes_the_links_the_submit_page_takes(as_staff):
    """A path in its own script or a high port is a link like any other, through the API
    as through the submit page."""
    for n, link in enumerate(["https://de.wikipedia.org/wiki/Straße", "http://example.org:65535/"]):
        response = as_staff.post("/api/articles/", {"title": f"T{n}", "link": link}, format="json")
        assert response.status_code == 201, response.content
        assert response.json()["link"] == link
