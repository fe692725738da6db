"""Tool and response schemas as Gemini takes them: the OpenAPI subset its `Schema` accepts,
made from JSON Schema (local `$ref`s inlined, `allOf` merged, nullable types folded)."""

from __future__ import annotations

from typing import Any

from app.llm.errors import ValidationError

__all__ = ["clean_schema"]

# The OpenAPI subset Gemini's `Schema` accepts; anything else is refused with a 400.
_SCHEMA_KEYS = frozenset(
    {"type", "format", "title", "description", "nullable", "enum", "items", "properties"}
    | {"required", "minItems", "maxItems", "minLength", "maxLength", "minimum", "maximum"}
    | {"pattern", "anyOf", "default", "example", "propertyOrdering"}
    | {"minProperties", "maxProperties"}
)


def clean_schema(schema: dict[str, Any], *, where: str) -> dict[str, Any]:
    """A JSON Schema as Gemini takes it: local `$ref`s inlined, `const` as `enum`,
    `["x", "null"]` types as `nullable`, unsupported keywords left out. A recursive or
    outside `$ref` raises `ValidationError` (`where` names the tool in the message)."""
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    return _clean(schema, defs, (), where)


def _clean(node: Any, defs: dict[str, Any], seen: tuple[str, ...], where: str) -> Any:
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/").removeprefix("#/definitions/")
        if name == ref or name not in defs:
            raise ValidationError(
                f"The schema of {where} refers to {ref!r}, which Gemini cannot follow."
            )
        if name in seen:
            raise ValidationError(
                f"The schema of {where} is recursive ({ref!r}); Gemini takes no recursive schemas."
            )
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _clean(merged, defs, (*seen, name), where)
    out: dict[str, Any] = {}
    for part in node.get("allOf") or ():  # Gemini has no allOf: the parts are merged
        sub = _clean(part, defs, seen, where)
        if isinstance(sub, dict):
            props = {**out.get("properties", {}), **sub.get("properties", {})}
            required = [*out.get("required", []), *sub.get("required", [])]
            out.update(sub)
            if props:
                out["properties"] = props
            if required:
                out["required"] = list(dict.fromkeys(required))
    kind = node.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) < len(kind):
            out["nullable"] = True
        if len(kinds) == 1:
            out["type"] = kinds[0]
        elif kinds:
            out["anyOf"] = [{"type": k} for k in kinds]
    elif kind is not None:
        out["type"] = kind
    if "const" in node:
        out["enum"] = [node["const"]]
    variants = [*(node.get("anyOf") or ()), *(node.get("oneOf") or ())]
    if variants:
        cleaned = [
            _clean(v, defs, seen, where)
            for v in variants
            if not (isinstance(v, dict) and v.get("type") == "null")
        ]
        if len(cleaned) < len(variants):
            out["nullable"] = True
        if len(cleaned) == 1 and isinstance(cleaned[0], dict):
            out.update({k: v for k, v in cleaned[0].items() if k not in out or k == "type"})
        elif cleaned:
            out["anyOf"] = cleaned
    for key, value in node.items():
        if key not in _SCHEMA_KEYS or key in ("type", "anyOf"):
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean(sub, defs, seen, where) for name, sub in value.items()}
        elif key == "items":
            first = value[0] if isinstance(value, list) and value else value
            out[key] = _clean(first, defs, seen, where)
        else:
            out[key] = value
    return out
