"""Names of things — people, places, events, products — read offline from text. Pure.

Why: a question names what it is about ("深圳那个无人机展持续多久？", "What did Melanie
paint?"). The facts worth gathering are the ones that name the same things, either in
their words or in their context (a follow-up that only says "它…" carries the event it
points to, see :mod:`archivist.index.conversation`), and a question about two things
(multi-hop) prefers facts about both: recall's ``entities`` feature is the share of the
question's named things a candidate names.

* Chinese: jieba's proper-noun tags (``nr`` person, ``ns`` place, ``nt`` organisation,
  ``nz`` other), foreign words inside Chinese text, and nouns of three or more
  characters (演唱会, 读书会, 无人机) — jieba's tags are rough, so event words are taken
  by length;
* other text: capitalised words and runs of them that do not merely open a sentence
  ("Charlotte's Web", "New York", "Melanie"), and quoted titles.
"""

from __future__ import annotations

import re

from .text import STOPWORDS, _CJK_RUN, pos_tagger

_NAME_TAGS = ("nr", "ns", "nt", "nz", "eng")
_LONG_NOUN_TAGS = ("n", "l", "vn")
_NOT_NAMES = frozenset("""多长时间 什么时候 为什么 怎么样 是不是 有没有 那时候 这时候 一段时间 好久""".split())
_CAPITALISED = re.compile(r"\b[A-Z][\w'’-]+(?:\s+(?:of|the|de|van|von|&)?\s*[A-Z][\w'’-]+)*")
_QUOTED = re.compile(r"[\"“«「『]([^\"”»」』]{2,60})[\"”»」』]")
_SENTENCE_START = re.compile(r"(?:^|[.!?。！？:;\n]\s*|[\"“]\s*)$")
MAX_ENTITIES = 6


def entities(text: str) -> list[str]:
    """The named things in ``text``, first mention first, at most :data:`MAX_ENTITIES`."""
    found: list[str] = []
    for run in _CJK_RUN.finditer(text):
        for word, tag in pos_tagger().cut(run.group()):
            if word in _NOT_NAMES or word in STOPWORDS:
                continue
            if tag.startswith(_NAME_TAGS) and len(word) > 1 or tag in _LONG_NOUN_TAGS and len(word) > 2:
                found.append(word)
    latin = _CJK_RUN.sub(" ", text)
    if latin != text:  # foreign words inside Chinese text ("那个drone展") are names of things
        found += [w for w in re.findall(r"[A-Za-z][\w'-]+", latin) if w.lower() not in STOPWORDS]
    for m in _QUOTED.finditer(latin):
        found.append(m.group(1).strip())
    for m in _CAPITALISED.finditer(latin):
        name = re.sub(r"['’]s?$", "", m.group().strip())
        words = name.split()
        opens = _SENTENCE_START.search(latin[:m.start()]) is not None
        if opens and len(words) == 1 and (name.lower() in STOPWORDS or name.lower() in _OPENERS):
            continue
        if name.lower() in STOPWORDS or len(name) < 2:
            continue
        if opens and words[0].lower() in STOPWORDS | _OPENERS:
            name = " ".join(words[1:])
            if not name:
                continue
        found.append(name)
    return list(dict.fromkeys(found))[:MAX_ENTITIES]


# Capitalised only because they open a sentence or a question
_OPENERS = frozenset("""hey hi hello thanks thank yeah yep yes no wow oh ok okay sure well so and but
    great awesome cool nice sounds really what when where who whom whose which why how did does do is are
    was were can could would should will have has had i i'm i've i'd i'll it's that's""".split())
