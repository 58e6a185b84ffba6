"""Text handling shared by indexing, search and governance.

* :func:`normalize` folds width, case and whitespace so that quotes and duplicates
  compare the way a reader would compare them.
* :func:`segment_for_index` turns text into what the FTS5 table stores: CJK runs are
  cut with jieba (search mode, so "中文解释" also yields "中文"), other runs are left
  to SQLite's ``unicode61`` tokenizer (with Porter stemming). jieba only sees CJK
  runs: it is slow on Latin text and adds nothing there.
* :func:`build_match` turns arbitrary user text into a safe FTS5 expression: every
  term is a double-quoted string (quotes doubled), terms are OR-ed, stopwords are
  dropped. Nothing a user types can reach FTS5 syntax, so it never raises.
"""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Iterable

from ..model.folding import compact, normalize, sanitize  # noqa: F401 - re-exported for the index's callers
from ..model.memo import memo

_CJK = (
    r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef"  # Han
    r"\u3040-\u30ff"  # kana
    r"\uac00-\ud7af"  # hangul
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_HAS_CJK = re.compile(f"[{_CJK}]")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # what unicode61 would call a token (roughly)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACE = re.compile(r"\s+")

# Words that match half of any corpus and carry no meaning for recall. Dropping them
# keeps result quality and makes FTS5 ranking an order of magnitude cheaper.
STOPWORDS_EN = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve don didn doesn isn wasn aren weren won wouldn shouldn couldn hasn haven
    also did does get got yes ok okay""".split()
)
STOPWORDS_ZH = frozenset(
    """的 了 是 在 和 与 及 或 也 就 都 而 又 着 过 把 被 让 给 对 从 向 为 以 于 之 其 这 那 这个 那个
    这些 那些 我 你 您 他 她 它 我们 你们 他们 她们 它们 吗 呢 吧 啊 呀 哦 嗯 么 什么 怎么 怎样 如何
    哪 哪里 哪个 谁 有 没有 没 不 一个 一些 一下 上 下 中 里 个 用 要 会 能 可以 还 很 更 最 所以 因为
    如果 但是 但 然后 就是 还是 已经 曾经 自己 时候""".split()
)
STOPWORDS = STOPWORDS_EN | STOPWORDS_ZH

_jieba_lock = threading.Lock()
_jieba_tokenizer = None

MAX_QUERY_CHARS = 10_000  # the longest query a search reads (a longer one is an error, or, in a view, its end)


def _jieba():
    """A private jieba tokenizer (its own cache; quiet logging), built once."""
    global _jieba_tokenizer
    if _jieba_tokenizer is None:
        with _jieba_lock:
            if _jieba_tokenizer is None:
                import jieba

                jieba.setLogLevel(logging.WARNING)
                tokenizer = jieba.Tokenizer()
                tokenizer.initialize()
                _jieba_tokenizer = tokenizer
    return _jieba_tokenizer


_pos_tagger = None


def pos_tagger():
    """A jieba part-of-speech tagger over the same private tokenizer, built once."""
    global _pos_tagger
    if _pos_tagger is None:
        tokenizer = _jieba()  # outside the lock: it takes the lock itself
        with _jieba_lock:
            if _pos_tagger is None:
                import jieba.posseg

                _pos_tagger = jieba.posseg.POSTokenizer(tokenizer)
    return _pos_tagger


def clean(text: str) -> str:
    """Remove control characters (except tab/newline) and NFC-normalise."""
    return unicodedata.normalize("NFC", _CONTROL.sub("", text))


def has_cjk(text: str) -> bool:
    return _HAS_CJK.search(text) is not None


def _cjk_terms(run: str) -> list[str]:
    return [t for t in _jieba().cut_for_search(run) if t.strip()]


def indexed_text(content: str, context: str | None) -> str:
    """What the keyword index holds for a fact: its content, then its context."""
    return content + ("\n" + context if context else "")


@memo(8192)  # a large batch is segmented ahead, partly in helper processes (archivist.pipeline.batch_reading)
def segment_for_index(text: str) -> str:
    """The text stored in the FTS5 table: CJK runs become space-separated jieba terms."""
    text = unicodedata.normalize("NFKC", clean(text))
    out: list[str] = []
    pos = 0
    for match in _CJK_RUN.finditer(text):
        if match.start() > pos:
            out.append(text[pos : match.start()])
        out.append(" ".join(_cjk_terms(match.group())))
        pos = match.end()
    out.append(text[pos:])
    return " ".join(part.strip() for part in out if part.strip())


def query_terms(text: str, *, stopwords: Iterable[str] = STOPWORDS, limit: int = 64) -> list[str]:
    """Distinct search terms of a query, in order, without stopwords; at most ``limit``,
    the latest ones (a long query is usually a conversation so far).

    If every term is a stopword the stopwords are kept, so "what is it" still searches.
    """
    # lower(), not casefold(): the index lowercases ("straße" stays "straße", never
    # "strasse"); invisible characters go as they went from stored text; the dot of a
    # lowercased "İ" goes as the index drops it (else it would split "istanbul")
    text = unicodedata.normalize("NFKC", sanitize(text)).lower().replace("i\u0307", "i")
    terms: list[str] = []
    pos = 0
    for match in _CJK_RUN.finditer(text):
        terms.extend(_WORD.findall(text[pos : match.start()]))
        terms.extend(_cjk_terms(match.group()))
        pos = match.end()
    terms.extend(_WORD.findall(text[pos:]))
    seen: dict[str, None] = {}
    for term in terms:
        if _WORD.search(term):
            seen.setdefault(term, None)
    distinct = list(seen)
    stop = frozenset(stopwords)
    meaningful = [t for t in distinct if t not in stop]
    chosen = meaningful or distinct
    return chosen[-limit:]  # a long query (a conversation so far): its latest words matter most


def quote_term(term: str) -> str:
    """An FTS5 string literal: the only escape FTS5 strings have is doubling the quote."""
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: Iterable[str]) -> str:
    """The FTS5 MATCH expression the store runs: every term a quoted string, OR-ed."""
    return " OR ".join(quote_term(t) for t in terms)


def build_match(text: str, *, stopwords: Iterable[str] = STOPWORDS) -> str | None:
    """A safe FTS5 MATCH expression for any text, or ``None`` when nothing is searchable."""
    terms = query_terms(text, stopwords=stopwords)
    return match_expression(terms) if terms else None
