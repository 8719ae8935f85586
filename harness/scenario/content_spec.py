"""Turns the scenario format's content specs (text, base64, hex, generated lines, patterns) into bytes,
and a ``$code_points`` argument into the text it stands for (which may hold a lone surrogate)."""

from __future__ import annotations

import base64
import binascii
import codecs
from typing import Any


def to_bytes(spec: Any) -> bytes:
    """Returns the bytes a content spec stands for (see docs/scenario-format.md, "Content")."""
    if isinstance(spec, str):
        return spec.encode("utf-8")
    if not isinstance(spec, dict) or len(spec) == 0:
        raise ValueError(f"not a content spec: {spec!r}")
    if "text" in spec:
        return spec["text"].encode(spec.get("encoding", "utf-8"))
    if "base64" in spec:
        try:
            return base64.b64decode(spec["base64"], validate=True)
        except binascii.Error as exc:
            raise ValueError(f"invalid base64: {exc}") from None
    if "hex" in spec:
        return bytes.fromhex("".join(spec["hex"].split()))
    if "lines" in spec:
        return _lines(spec["lines"])
    if "pattern" in spec:
        unit = spec["pattern"].encode("utf-8")
        size = spec["size"]
        return (unit * (size // len(unit) + 1))[:size]
    raise ValueError(f"not a content spec: {spec!r}")


#: Items one ``$code_points`` list may hold (pieces of text and single code points).
MAX_CODE_POINT_ITEMS = 4096


def code_points_text(items: list[Any]) -> str:
    """Returns the text a ``{$code_points: [...]}`` argument stands for: its strings as they are and
    each integer as that one code point, joined. Lone surrogates (U+D800 to U+DFFF) are allowed:
    they are what the form exists for (a JSON string can hold ``"\\ud800"``, a YAML file cannot)."""
    check_code_points(items)
    return "".join(item if isinstance(item, str) else chr(item) for item in items)


def check_code_points(items: Any) -> None:
    """Raises ValueError when ``items`` is not a ``$code_points`` list (see :func:`code_points_text`)."""
    if not isinstance(items, list) or not items:
        raise ValueError("$code_points takes a non-empty list of strings and code points (integers)")
    if len(items) > MAX_CODE_POINT_ITEMS:
        raise ValueError(f"$code_points holds {len(items)} items, more than {MAX_CODE_POINT_ITEMS}")
    for position, item in enumerate(items):
        if isinstance(item, str):
            continue
        if isinstance(item, bool) or not isinstance(item, int):
            raise ValueError(f"item {position} ({item!r}) is neither a string nor a code point (an integer)")
        if not 0 <= item <= 0x10FFFF:
            raise ValueError(f"item {position} ({item}) is not a code point (0 to 0x10FFFF)")


def lone_surrogate_in(args: Any) -> bool:
    """Returns whether call arguments hold a ``$code_points`` list naming a lone surrogate (U+D800 to U+DFFF)."""
    if isinstance(args, dict):
        if len(args) == 1 and "$code_points" in args and isinstance(args["$code_points"], list):
            return any(isinstance(item, int) and 0xD800 <= item <= 0xDFFF for item in args["$code_points"])
        return any(lone_surrogate_in(item) for item in args.values())
    if isinstance(args, list):
        return any(lone_surrogate_in(item) for item in args)
    return False


def check(spec: Any) -> None:
    """Raises ValueError (or LookupError) when a content spec cannot make bytes; never builds them."""
    if not isinstance(spec, (str, dict)) or (isinstance(spec, dict) and not (
            set(spec) & {"text", "base64", "hex", "lines", "pattern"})):
        raise ValueError(f"not a content spec: {spec!r}")
    if isinstance(spec, dict):
        if "pattern" in spec and not isinstance(spec.get("size"), int):
            raise ValueError("a pattern needs an integer size")
        if "encoding" in spec:
            codecs.lookup(spec["encoding"])
            spec["text"].encode(spec["encoding"])
        elif "base64" in spec or "hex" in spec:
            to_bytes(spec)


def size_of(spec: Any) -> int:
    """Returns how many bytes a content spec stands for (an upper bound for generated lines), without making them."""
    if isinstance(spec, str):
        return len(spec.encode("utf-8", "surrogatepass"))
    if not isinstance(spec, dict):
        return 0
    if "text" in spec and isinstance(spec["text"], str):
        return 4 * len(spec["text"])  # no codec makes more than 4 bytes of a character
    if "base64" in spec and isinstance(spec["base64"], str):
        return len(spec["base64"]) * 3 // 4 + 3
    if "hex" in spec and isinstance(spec["hex"], str):
        return len(spec["hex"]) // 2
    if "lines" in spec:
        lines = spec["lines"] if isinstance(spec["lines"], dict) else {"count": spec["lines"]}
        count = lines.get("count", 0) if isinstance(lines.get("count", 0), int) else 0
        template = str(lines.get("template", "line {n}"))
        per_line = len(template.encode("utf-8", "surrogatepass")) + len(str(lines.get("eol", "\n")).encode("utf-8", "surrogatepass"))
        per_line += template.count("{n}") * len(str(max(count, 1)))
        return max(0, count) * per_line
    if "pattern" in spec and isinstance(spec.get("size"), int):
        return max(0, spec["size"])
    return 0


def of_given_file(spec: Any) -> Any:
    """Returns the content spec of a ``given.files`` entry: its ``content`` where it has one (beside a
    ``mode``), else the entry itself."""
    return spec["content"] if isinstance(spec, dict) and "content" in spec else spec


def generated_size(spec: Any) -> int | None:
    """Returns the exact number of bytes a generated content spec (``lines``, ``pattern``) stands for,
    without making them; None for any other spec, or one :func:`to_bytes` would refuse (make it to
    learn more). A caller that keeps only small contents learns a large one is large for free."""
    if not isinstance(spec, dict):
        return None
    try:
        if "lines" in spec and not ({"text", "base64", "hex"} & set(spec)):
            return _lines_size(spec["lines"])
        if "pattern" in spec and not ({"text", "base64", "hex", "lines"} & set(spec)):
            size = spec["size"]
            if type(size) is int and size >= 0 and spec["pattern"].encode("utf-8"):
                return size
    except (KeyError, TypeError, AttributeError, UnicodeError):
        return None
    return None


def _lines_size(spec: Any) -> int | None:
    """The length of :func:`_lines`' bytes, counted: the template's own bytes on every line, the
    digits of every line number (at each ``{n}``), the line ends between lines and the final one."""
    if type(spec) is int:
        spec = {"count": spec}
    if not isinstance(spec, dict):
        return None
    template, eol, count = spec.get("template", "line {n}"), spec.get("eol", "\n"), spec["count"]
    if not (isinstance(template, str) and isinstance(eol, str) and type(count) is int):
        return None
    parts = template.split("{n}")
    own, end = len("".join(parts).encode("utf-8")), len(eol.encode("utf-8"))
    lines = max(count, 0)
    digits, width, low = 0, 1, 1
    while low <= lines:
        digits += (min(lines, low * 10 - 1) - low + 1) * width
        width, low = width + 1, low * 10
    final = end if count and spec.get("final_eol", True) else 0
    return lines * own + (len(parts) - 1) * digits + max(lines - 1, 0) * end + final


def code_points_size(items: Any) -> int:
    """Returns how many bytes (UTF-8, surrogates as three) a ``$code_points`` list stands for, without joining it."""
    if not isinstance(items, list):
        return 0
    return sum(len(item.encode("utf-8", "surrogatepass")) if isinstance(item, str) else 4 for item in items)


def _lines(spec: int | dict[str, Any]) -> bytes:
    if isinstance(spec, int):
        spec = {"count": spec}
    template = spec.get("template", "line {n}")
    eol = spec.get("eol", "\n")
    count = spec["count"]
    parts = template.split("{n}")
    if len(parts) == 1:  # the same line every time: repeated, with no list of a line per line
        body = (template + eol) * (count - 1) + template if count > 0 else ""
    elif len(parts) == 2:  # the common case, made fast: a million lines in under 0.2 s
        prefix, suffix = parts
        body = eol.join([f"{prefix}{n}{suffix}" for n in range(1, count + 1)])
    else:
        body = eol.join(template.replace("{n}", str(n)) for n in range(1, count + 1))
    if count and spec.get("final_eol", True):
        body += eol
    return body.encode("utf-8")


def describe(data: bytes, limit: int = 200) -> str:
    """Returns a short human-readable rendering of bytes: text when it decodes, else hex."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        shown = data[: limit // 2].hex(" ")
        more = f" ... ({len(data)} bytes)" if len(data) > limit // 2 else ""
        return f"<bytes {shown}{more}>"
    if len(text) > limit:
        return repr(text[:limit]) + f" ... ({len(data)} bytes)"
    return repr(text)
