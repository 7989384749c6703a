"""Search over the KB by words: ids, titles, messages, packages, tags and prose, in English and Chinese.

People search with a fragment of an error message, a package name, or a phrase in Chinese ("设备不一致",
"半精度 梯度"). Matching substrings of characters finds "oom" inside "room" and ranks by accident, so the index
holds whole words instead: English words (with their ``zero-3``/``zero3`` spellings and a plain plural), Chinese
runs matched as text, and a small table of the words people use for the same thing in either language
(设备/device, 半精度/half/fp16, 显存/memory). A query word the KB never uses is looked up among the KB's own words
by spelling (rapidfuzz), so a typo still finds its entry. Each hit names the field that matched, with readable text
(a message pattern is shown as the words it matches, never as regex syntax).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from rapidfuzz import fuzz, process

from .entry import KBEntry

try:  # Python >= 3.11
    import re._constants as _sre_constants
    import re._parser as _sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _sre_constants
    import sre_parse as _sre_parse

__all__ = ["SYNONYMS", "SearchHit", "SearchIndex", "readable_pattern", "search"]

# Field weights: a word in a title or message counts more than one deep in the prose.
_FIELDS = {"id": 1.0, "title": 1.0, "message": 0.9, "tag": 0.8, "package": 0.8, "text": 0.45}

SYNONYMS: tuple[tuple[str, ...], ...] = (
    ("device", "设备"),
    ("half", "fp16", "float16", "半精度"),
    ("bf16", "bfloat16"),
    ("fp32", "float32", "单精度"),
    ("float64", "fp64", "double", "双精度"),
    ("fp8", "float8"),
    ("tf32", "tensorfloat-32"),
    ("precision", "精度"),
    ("mixed precision", "混合精度", "amp"),
    ("memory", "显存", "vram"),
    ("oom", "out of memory", "显存不足", "显存不够", "内存不足"),
    ("gradient", "grad", "梯度"),
    ("mismatch", "不一致", "different", "不同", "不匹配"),
    ("dtype", "数据类型"),
    ("gpu", "显卡"),
    ("multi-gpu", "多卡", "several gpus", "multiple gpus"),
    ("quantized", "quantization", "quantize", "量化"),
    ("optimizer", "优化器"),
    ("attention", "注意力"),
    ("offload", "卸载"),
    ("checkpoint", "检查点"),
    ("loss", "损失"),
    ("index", "indice", "索引", "下标"),
    ("convolution", "conv", "卷积"),
    ("matmul", "gemm", "矩阵乘", "矩阵乘法"),
    ("int8", "8-bit", "int8"),
    ("4-bit", "int4", "nf4"),
    ("zero-3", "zero stage 3"),
    ("resume", "resumed", "续训", "恢复训练"),
    ("merge", "合并"),
    ("compile", "编译"),
    ("overflow", "溢出"),
    ("mps", "apple silicon", "apple", "苹果", "mac"),
    ("same", "同一个", "同一"),
    ("turing", "t4", "rtx 20"),
    ("volta", "v100"),
    ("pascal", "p100", "p40", "gtx 10"),
    ("ampere", "a100", "rtx 30"),
    ("hopper", "h100"),
    ("not supported", "unsupported", "不支持"),
    ("gradient clipping", "clip_grad_norm", "梯度裁剪"),
    ("loss scale", "loss scaling", "缩放"),
    ("gradscaler", "grad scaler", "gradient scaling", "梯度缩放"),
    ("training", "train", "训练"),
    ("inference", "推理"),
    ("kernel", "算子"),
    ("tensor", "张量"),
    ("weight", "权重"),
    ("compute capability", "算力"),
    ("cross entropy", "cross_entropy", "交叉熵"),
    ("embedding", "嵌入"),
    ("integer", "int64", "long", "整数"),
    ("model", "模型"),
)
"""Words that mean the same thing to the people who search: a query word matches any word of its group."""

# Words that carry no information in a KB of failures (every entry is an error), in either language.
_STOP = frozenset(
    (
        *("a", "an", "the", "of", "to", "in", "on", "at", "for", "with", "and", "or", "is", "are", "be", "was"),
        *("when", "while", "by", "from", "my", "i", "it", "this", "that", "not", "how", "why", "but", "all"),
        *("error", "errors", "fail", "failed", "failing", "fails", "get", "got"),
    )
)
_STOP_ZH = (
    "的",
    "了",
    "报错",
    "错误",
    "出错",
    "问题",
    "怎么办",
    "怎么",
    "如何",
    "解决",
    "时候",
    "时",
    "在",
    "和",
    "与",
    "是",
    "用",
    "后",
    "里",
    "我",
)

# A method call (``.to(``, ``.half()``) is a word of its own: ``to`` alone is a stop word.
_TOKEN = re.compile(r"\.[a-z_]\w*\((?:\))?|[a-z0-9]+(?:[._:+'-][a-z0-9]+)*|[\u3400-\u9fff]+")
_SEPARATORS = re.compile(r"[._:+'-]")
_CJK = re.compile(r"[\u3400-\u9fff]")
_SNIPPET = 60


@dataclass(frozen=True)
class SearchHit:
    """One entry that matches the query, with the field that matched best."""

    entry: KBEntry
    score: float
    """0-100: the share of the query's words (weighted by rarity) found, and how well they sit in one field."""
    field: str
    """``id``, ``title``, ``message``, ``tag``, ``package`` or ``text``."""
    snippet: str
    """The matching field's text, shortened around the first match (at most 60 characters, "…" where cut)."""


def _stem(word: str) -> str:
    """A plain English plural made singular (``gradients`` -> ``gradient``); enough for error vocabulary."""
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _spellings(token: str) -> tuple[str, ...]:
    """The index words of one English token as written: itself, singular, joined (``zero-3`` -> ``zero3``), and
    its parts (``unscale_and_clip_grads`` -> ``unscale``, ``and`` ...), each singular."""
    if token.startswith("."):
        return (_method(token),)
    parts = (_stem(p) for p in _SEPARATORS.split(token) if p)
    return (token, _stem(token), _SEPARATORS.sub("", token), *parts)


_GROUP_OPEN = re.compile(r"\(\?(?:P<\w+>|[:!=i]+\)?)")
_CLASSES = re.compile(r"(?<!\\)\[(?:\\.|[^\]])*\]|\\[dswbSWBAzZ]")
_ESCAPED = re.compile(r"\\(.)")
_SYNTAX = re.compile(r"[()|^$*+]|\{\d*,?\d*\}")
# Everything but letters, digits and Chinese, as one space: phrases and Chinese are found as text in this form.
_FLAT = re.compile(r"[^a-z0-9\u3400-\u9fff]+")


@dataclass(frozen=True)
class _Field:
    name: str
    text: str
    tokens: frozenset[str]
    """Its words as written, lower case (``zero-3``, ``unscale_and_clip_grads``, ``.to(``)."""
    flat: str
    """Lower case, each run of anything but letters, digits and Chinese one space, padded with spaces."""
    pattern: str = ""
    """For a message pattern: the regex (``text`` then too), shown as its words only when it is a hit."""


@dataclass(frozen=True)
class _Doc:
    entry: KBEntry
    fields: tuple[_Field, ...]


@dataclass(frozen=True)
class _Term:
    """One query word with the spellings that count as it (its synonym group, or close spellings)."""

    alternatives: tuple[str, ...]
    fuzzy: bool = False
    """Found only by spelling: counts a little less than the word itself."""


def _literal_text(items: Iterable[tuple[object, object]], names: dict[int, str]) -> str:
    """The text a parsed regex matches, read back: literals as written, an optional letter kept (``Atte?mp?ting``
    reads ``Attempting``), the first branch of an alternation, a named group or anything else variable as "…"."""
    out: list[str] = []
    c = _sre_constants
    for op, arg in items:
        if op is c.LITERAL:
            out.append(chr(arg))  # type: ignore[arg-type]
        elif op is c.SUBPATTERN:
            group = arg[0]  # type: ignore[index]
            out.append("…" if group in names else _literal_text(arg[-1], names))  # type: ignore[index]
        elif op is c.BRANCH:
            out.append(_literal_text(arg[1][0], names))  # type: ignore[index]
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            low, high, body = cast(tuple[int, int, Any], arg)
            inner = _literal_text(body, names)
            if len(body) == 1 and body[0][0] is c.LITERAL and high in (1, _sre_constants.MAXREPEAT):
                out.append(inner)  # ``e?``, ``s+``: the letter
            elif low == 0 and high == 1 and "…" not in inner:
                out.append(inner)  # an optional phrase: shown, it is part of one wording
            elif inner.strip() in ("", "…") and body[0][0] is c.IN and _is_space(body[0][1]):
                out.append(" ")
            else:
                out.append("…")
        elif op is c.IN:
            out.append(" " if _is_space(arg) else "…")
        elif op is c.ANY:
            out.append("…")
        elif op is c.CATEGORY:
            out.append(" " if arg is c.CATEGORY_SPACE else "…")
    return "".join(out)


def _is_space(items: object) -> bool:
    c = _sre_constants
    return isinstance(items, list) and any(op is c.CATEGORY and a is c.CATEGORY_SPACE for op, a in items)


def readable_pattern(pattern: str) -> str:
    """A message regex as the words it matches (``Atte?mp?ting to unscale FP16 gradients\\.`` ->
    ``Attempting to unscale FP16 gradients.``); variable parts read "…"."""
    try:
        parsed = _sre_parse.parse(pattern)
        names = {index: name for name, index in parsed.state.groupdict.items()}
        text = _literal_text(parsed, names)
    except Exception:  # RE2-only syntax Python cannot parse: strip the syntax instead
        text = re.sub(r"\(\?P<\w+>[^)]*\)", "…", pattern)
        text = re.sub(r"\\(.)", r"\1", re.sub(r"\(\?[:i]\)?|[\^$()?*+]|\[[^\]]*\]|\{\d*,?\d*\}", " ", text))
    text = re.sub(r"…(?:\s*…)+", "…", text)
    return re.sub(r"\s+", " ", text).strip()


def _field_texts(entry: KBEntry) -> Iterable[tuple[str, str]]:
    yield "id", entry.id
    yield "id", entry.slug
    yield "title", entry.title.en
    yield "title", entry.title.zh
    for condition in entry.errors:
        yield "pattern", condition.pattern
    for message in entry.messages:
        yield "message", message
    for tag in dict.fromkeys((*entry.tags, entry.family)):
        yield "tag", tag
    for name in sorted({c.name for c in entry.packages} | set(entry.affected) | set(entry.fixed_in)):
        yield "package", name
    yield "text", entry.cause.en
    yield "text", entry.cause.zh
    for step in entry.fix:
        yield "text", step.en
        yield "text", step.zh


def _pattern_words(pattern: str) -> str:
    """The words of a message regex, for the index only (cheap; a hit shows :func:`readable_pattern`): an
    optional letter kept (``Atte?mp?ting``), every branch of an alternation kept, the syntax gone."""
    text = _GROUP_OPEN.sub(" ", pattern)
    text = _CLASSES.sub(" ", text)
    text = _ESCAPED.sub(r"\1", text)
    return _SYNTAX.sub(" ", text).replace("?", "")


def _doc(entry: KBEntry) -> _Doc:
    fields = []
    for name, text in _field_texts(entry):
        if text:
            pattern = text if name == "pattern" else ""
            lower = (_pattern_words(text) if pattern else text).lower()
            tokens = frozenset(_TOKEN.findall(lower))
            fields.append(_Field("message" if pattern else name, text, tokens, f" {_FLAT.sub(' ', lower)} ", pattern))
    return _Doc(entry, tuple(fields))


def _method(token: str) -> str:
    """``.to(`` and ``.to()`` -> ``.to()``."""
    return token.rstrip("()") + "()"


def _normal(word: str) -> str:
    """A synonym-table or query spelling in the form the index stores (lower case, phrases split and singular)."""
    if _CJK.search(word):
        return word
    if word.startswith(".") and word.endswith(("(", ")")):
        return _method(word)
    parts = [_stem(p) for p in _SEPARATORS.split(word.lower()) if p]
    return " ".join(parts) if " " in word else (word.lower() if len(parts) > 1 else "".join(parts))


def _groups() -> dict[str, tuple[str, ...]]:
    """Every spelling in :data:`SYNONYMS` -> its whole group, in index form."""
    table: dict[str, tuple[str, ...]] = {}
    for group in SYNONYMS:
        spelled = tuple(dict.fromkeys(_normal(w) for w in group))
        for word in spelled:
            table[word] = tuple(dict.fromkeys((*table.get(word, ()), *spelled)))
    return table


def _segment_chinese(run: str, known: Sequence[str]) -> list[str]:
    """Forward longest match of the synonym table's (and the stop list's) Chinese words; the stretches between
    them stay whole."""
    pieces: list[str] = []
    rest = ""
    at = 0
    while at < len(run):
        word = next((w for w in known if run.startswith(w, at)), None)
        if word is None:
            rest += run[at]
            at += 1
            continue
        if rest:
            pieces.append(rest)
            rest = ""
        pieces.append(word)
        at += len(word)
    if rest:
        pieces.append(rest)
    return pieces


class SearchIndex:
    """The words of every entry, built once; :meth:`search` ranks entries for a query."""

    def __init__(self, entries: Iterable[KBEntry]) -> None:
        self._docs = tuple(_doc(e) for e in entries)
        self._synonyms = _groups()
        chinese = [w for w in (*self._synonyms, *_STOP_ZH) if _CJK.search(w)]
        self._chinese = tuple(sorted(chinese, key=len, reverse=True))
        # Index word -> the tokens as written that it stands for; the KB's few thousand distinct tokens are
        # spelled out once, not once per field.
        spelled: dict[str, set[str]] = {}
        for token in frozenset().union(*(f.tokens for d in self._docs for f in d.fields)):
            if not _CJK.match(token):
                for word in _spellings(token):
                    spelled.setdefault(word, set()).add(token)
        self._spelled = {word: frozenset(tokens) for word, tokens in spelled.items()}
        self._vocabulary = sorted(w for w in self._spelled if len(w) >= 4)
        self._phrases = sorted((w for w in self._synonyms if " " in w), key=lambda w: -w.count(" "))

    def _occurs(self, text: str) -> bool:
        return any(text in f.flat for d in self._docs for f in d.fields)

    def _holds(self, field: _Field, alternative: str) -> bool:
        """Whether ``field`` holds one spelling of a query word: Chinese and phrases as text, a word as a word."""
        if _CJK.search(alternative):
            return alternative in field.flat
        if " " in alternative:
            return f" {alternative} " in field.flat
        tokens = self._spelled.get(alternative)
        return tokens is not None and not field.tokens.isdisjoint(tokens)

    def terms(self, query: str) -> list[_Term]:
        """The query's words, each with the spellings that count as it."""
        tokens = _TOKEN.findall(query.lower())
        terms = self._english_terms([_normal(t) for t in tokens if not _CJK.match(t)])
        for token in tokens:
            if _CJK.match(token):
                terms.extend(self._chinese_terms(token))
        return terms

    def _english_terms(self, words: list[str]) -> list[_Term]:
        terms: list[_Term] = []
        english = " " + " ".join(words) + " "
        for phrase in self._phrases:  # "out of memory" is one word of meaning
            if f" {phrase} " in english:
                english = english.replace(f" {phrase} ", " ")
                terms.append(_Term(self._synonyms[phrase]))
        kept = [w for w in english.split() if w not in _STOP] or english.split()
        at = 0
        while at < len(kept):
            joined = "".join(kept[at : at + 2])
            if at + 1 < len(kept) and joined in self._spelled:  # "flash attention" is also "FlashAttention"
                terms.append(_Term((joined, f"{kept[at]} {kept[at + 1]}", *self._synonyms.get(joined, ()))))
                at += 2
                continue
            terms.append(self._english_term(kept[at]))
            at += 1
        return list(dict.fromkeys(terms))

    def _chinese_terms(self, run: str) -> list[_Term]:
        terms: list[_Term] = []
        for piece in _segment_chinese(run, self._chinese):
            if piece in self._synonyms:
                terms.append(_Term(self._synonyms[piece]))
            elif piece in _STOP_ZH or len(piece) == 1:
                continue  # one character alone says too little
            elif self._occurs(piece) or len(piece) == 2:
                terms.append(_Term((piece,)))
            else:  # an unknown stretch: its two-character words that the KB uses
                pairs = [piece[i : i + 2] for i in range(len(piece) - 1)]
                terms.extend(_Term((p,)) for p in dict.fromkeys(pairs) if self._occurs(p))
        return terms

    def _df(self, term: _Term) -> int:
        return sum(any(self._holds(f, a) for f in d.fields for a in term.alternatives) for d in self._docs)

    def _english_term(self, word: str) -> _Term:
        if word in self._synonyms:
            return _Term(self._synonyms[word])
        joined = _SEPARATORS.sub("", word)
        spellings = tuple(dict.fromkeys((word, joined, *self._synonyms.get(joined, ()))))
        if any(s in self._spelled for s in spellings) or len(word) < 5:
            return _Term(spellings)
        close = process.extract(word, self._vocabulary, scorer=fuzz.ratio, score_cutoff=85, limit=3)
        return _Term(tuple(c[0] for c in close) or spellings, fuzzy=True)

    def search(self, query: str, limit: int = 10, threshold: float = 40.0) -> list[SearchHit]:
        """Entries matching ``query`` best first (retired entries included, marked by their status)."""
        terms = self.terms(query)
        if not terms:
            return []
        lowered = query.strip().lower()
        idf = [math.log(1 + len(self._docs) / (1 + self._df(t))) * (0.8 if t.fuzzy else 1.0) for t in terms]
        pairs = _pairs(lowered)
        ranked: list[tuple[SearchHit, int]] = []  # (hit, tie-breaker: larger ranks first)
        for doc in self._docs:
            if doc.entry.id.lower() == lowered or doc.entry.slug.lower() in (lowered, lowered.split("/")[-1]):
                field = doc.fields[0] if doc.entry.id.lower() == lowered else doc.fields[1]
                ranked.append((SearchHit(doc.entry, 100.0, "id", field.text), 0))
                continue
            hit = self._score(doc, terms, idf, pairs)
            if hit is not None and hit[0].score >= threshold:
                ranked.append(hit)
        order = list(_FIELDS)
        ranked.sort(
            key=lambda r: (
                -r[0].score,
                not r[0].entry.is_family,  # the entry that explains the message in general answers a general query
                -r[1],
                order.index(r[0].field),
                r[0].entry.status.value != "active",
                r[0].entry.id,
            )
        )
        return [hit for hit, _ in ranked[:limit]]

    def _score(self, doc: _Doc, terms: list[_Term], idf: list[float], pairs: list[str]) -> tuple[SearchHit, int] | None:
        """The entry's hit (or None when no word matched) and a tie-breaker.

        The score mixes how much of the query the entry holds anywhere (each word by its best field), how much one
        field holds on its own, and how many adjacent query words stand side by side in it, as in the message.
        """
        total = sum(idf)
        rows = [[any(self._holds(f, a) for a in t.alternatives) for f in doc.fields] for t in terms]
        weights = [
            max((_FIELDS[f.name] for f, held in zip(doc.fields, row, strict=True) if held), default=0.0) for row in rows
        ]
        coverage = sum(w * s for w, s in zip(weights, idf, strict=True)) / total
        focus, where = 0.0, -1
        for k, f in enumerate(doc.fields):
            held = sum(s for s, row in zip(idf, rows, strict=True) if row[k]) / total * _FIELDS[f.name]
            if held > focus:
                focus, where = held, k
        if where < 0:
            return None
        together = sum(any(f" {p} " in f.flat for f in doc.fields) for p in pairs) / len(pairs) if pairs else coverage
        field = doc.fields[where]
        shown = readable_pattern(field.pattern) if field.pattern else field.text
        spots = [a for t, row in zip(terms, rows, strict=True) if row[where] for a in t.alternatives]
        score = round(100 * (0.55 * coverage + 0.35 * focus + 0.10 * together), 1)
        # Ties go to the shorter field holding the words (a title about them, not a paragraph that mentions them).
        return SearchHit(doc.entry, score, field.name, _snippet(shown, spots)), -len(shown)


def _pairs(query: str) -> list[str]:
    """Adjacent English words of the query (``same device``): found side by side in a field, they rank it up."""
    tokens = [t for t in _TOKEN.findall(query) if not _CJK.match(t) and not t.startswith(".")]
    words = [part for t in tokens for part in _SEPARATORS.split(t) if part]
    return [f"{a} {b}" for a, b in itertools.pairwise(words) if a not in _STOP and b not in _STOP]


def _snippet(text: str, spots: Sequence[str]) -> str:
    """At most 60 characters of ``text`` around the first matched word, cut between words, "…" where cut."""
    flat = " ".join(text.split())
    if len(flat) <= _SNIPPET:
        return flat
    lowered = flat.lower()
    found = [i for i in (_locate(lowered, s) for s in spots) if i >= 0]
    at = min(found, default=0)
    start = 0 if at < _SNIPPET // 3 else flat.rfind(" ", 0, at - _SNIPPET // 4) + 1
    end = start + _SNIPPET - 2
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > at else end
    piece = flat[start:end].strip()
    return ("…" if start else "") + piece + ("…" if end < len(flat) else "")


def _locate(lowered: str, spot: str) -> int:
    if _CJK.search(spot):
        return lowered.find(spot)
    found = re.search(r"(?<![a-z0-9])" + re.escape(spot.split(" ")[0]), lowered)
    return found.start() if found else -1


def search(entries: Iterable[KBEntry], query: str, limit: int = 10, threshold: float = 40.0) -> list[SearchHit]:
    """Entries matching ``query`` best first; builds a :class:`SearchIndex` (keep one to search many times)."""
    return SearchIndex(entries).search(query, limit, threshold)
