"""A ``.dpf`` read as XML with a hardened parser (``defusedxml``): no entity is expanded, no DTD
is read, nothing is fetched. A file that declares a DTD or entities, or refers to anything
outside itself, is refused with the reason; so is one that is not well-formed XML."""

from __future__ import annotations

from xml.etree.ElementTree import Element, ParseError

from debrief_calc.errors import ValidationFailed

__all__ = ["read_xml"]


def read_xml(text: str, where: str) -> Element:
    from defusedxml import ElementTree as SafeTree
    from defusedxml.common import DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden

    def refuse(why: str, rule: str) -> ValidationFailed:
        return ValidationFailed(
            f"{where} is refused: {why}. A Debrief plot needs none of it; the file is not read (no entities are "
            "expanded, no DTD or other file is fetched)",
            details={"field": "path", "rule": rule},
        )

    try:
        root: Element = SafeTree.fromstring(text, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DTDForbidden:
        raise refuse("it declares a DTD (<!DOCTYPE …>)", "no DTD") from None
    except EntitiesForbidden:
        raise refuse("it declares entities (<!ENTITY …>), as billion-laughs bombs do", "no entities") from None
    except ExternalReferenceForbidden:
        raise refuse("it refers to an external resource", "no external references") from None
    except ParseError as exc:
        line, column = exc.position
        raise ValidationFailed(
            f"{where} is not well-formed XML (line {line}, column {column}): {str(exc).split(':')[0]}; "
            "a legacy Debrief plot (.dpf) is an XML document with a <plot> root",
            details={"field": "path", "rule": "well-formed XML", "line": line, "column": column},
        ) from None
    return root
