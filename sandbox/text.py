"""Deterministic prose for sandbox pages.

Word shingling only behaves as on real pages when the text varies like real
prose: two pages of one site share vocabulary and grammar but almost never a
run of ten words. `Prose` therefore fills a set of sentence grammars with
topic words drawn from a Zipf-like distribution (a few words are common, most
are rare, as in natural text), biased per page towards a handful of focus
nouns so that pages differ in what they are about. All randomness comes from
the `random.Random` handed in, never from the global generator.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Sequence

from .vocab import (
    CONNECTIVES,
    DETERMINERS,
    FIRST_NAMES,
    GENERAL,
    LAST_NAMES,
    MODALS,
    PLACE_NAMES,
    PLURAL_DETERMINERS,
    PREPOSITIONS,
    TOPICS,
)

_IRREGULAR_PLURALS = {
    "analysis": "analyses",
    "child": "children",
    "corpus": "corpora",
    "fish": "fish",
    "hypothesis": "hypotheses",
    "knife": "knives",
    "loaf": "loaves",
    "matrix": "matrices",
    "potato": "potatoes",
    "thesis": "theses",
    "tomato": "tomatoes",
    "vertex": "vertices",
}

_NUMBERS = ("two", "three", "four", "five", "six", "seven", "eight", "ten", "twelve", "twenty")


def plural(noun: str) -> str:
    """English plural of a vocabulary noun."""
    if noun in _IRREGULAR_PLURALS:
        return _IRREGULAR_PLURALS[noun]
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def third_person(verb: str) -> str:
    """Third-person singular present of a vocabulary verb."""
    if verb.endswith(("s", "x", "z", "ch", "sh", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


# "a" becomes "an" before a vowel sound; the exceptions are the vocabulary's
# words that start with a vowel letter but a consonant sound, or the reverse.
_ARTICLE = re.compile(r"\b([Aa]) (?=(?!uni|use|usu|one|eu)[aeiou]|hour|honest)")


def _fix_articles(text: str) -> str:
    return _ARTICLE.sub(lambda m: m.group(1) + "n ", text)


def title_case(text: str) -> str:
    """Capitalise a phrase like a headline, leaving short function words low."""
    small = {"a", "an", "and", "at", "by", "for", "from", "in", "of", "on", "or", "the", "to", "with"}
    words = text.split()
    return " ".join(
        w if (i and w in small) else w[:1].upper() + w[1:] for i, w in enumerate(words)
    )


def slug(text: str) -> str:
    """URL path segment for a title: lower case words joined by hyphens."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


class _Picker:
    """Zipf-weighted choice over a word list, in an order shuffled per generator.

    Shuffling first means each site has its own frequent words, as real sites
    do, while the weights keep the long tail of rare words.
    """

    def __init__(self, rng: random.Random, words: Sequence[str], tail: Sequence[str] = ()) -> None:
        ordered = list(words)
        rng.shuffle(ordered)
        extra = list(tail)
        rng.shuffle(extra)
        self.words = ordered + extra
        self._cum = list(itertools.accumulate(1.0 / (rank + 1) ** 0.8 for rank in range(len(self.words))))
        self._rng = rng

    def __call__(self) -> str:
        return self._rng.choices(self.words, cum_weights=self._cum)[0]


# Sentence grammars. Upper-case slots are filled by `Prose` methods of the same
# name (NPs: singular noun phrase, NPp: plural, V: base verb, V3: third person,
# PP: prepositional phrase, ...); everything else is literal text.
_STATEMENTS = (
    "NPs V3 NP PP.",
    "NPp MOD V NP ADV.",
    "CONN, NPs V3 NP and V3 NP.",
    "When NPs V3 NP, NPp V NP PP.",
    "It is ADJ to V NP before NPs V3 NP.",
    "There are NUM ADJ Np PP, but only NPs V3 NP.",
    "NPs is ADJ PP, so NPp ADV V NP.",
    "If NPs V3 ADJ, V NP PP.",
    "Most Np V NP, although NPs ADV V3 NP PP.",
    "This is why NPs V3 NP PP.",
    "NAME ADV V3 NP PP, which V3 NP.",
    "The N of NP V3 NP.",
    "NPp that V NP are ADV ADJ.",
    "Because NPs V3 NP, NPs MOD V NP PP.",
    "Not every N V3 NP; NPs ADV V3 NP instead.",
    "NPs V3 NP whenever NPp V NP.",
    "Both NPs and NPs V NP PP.",
    "CONN, it V3 NP PP PP.",
    "Few Np are as ADJ as NPs PP.",
    "NPs MOD V NP, and NPs MOD V NP PP.",
    "Once NPs V3 NP, NPp V ADV.",
    "NAME and NAME V NP PP.",
    "What V3 NP is NPs PP.",
    "NPp ADV V NP PP and NP PP.",
    "NPs is not ADJ, but it V3 NP PP.",
    "CONN, NPp that V NP MOD V NP.",
    "Ask whether NPs V3 NP PP or NPp V NP.",
    "NUM Np V NP, and NPs V3 the rest.",
)

# Instructions, for recipes and how-to pages.
_IMPERATIVES = (
    "V the ADJ N PP.",
    "V NP ADV, then V NP PP.",
    "Once NPs is ADJ, V NP PP.",
    "V NP and V for NUM minutes.",
    "Carefully V NP until it is ADJ.",
    "If NPs looks ADJ, V NP PP.",
    "V NP PP; do not V NP yet.",
    "Keep NP PP and V NP ADV.",
)

_SLOT = re.compile(r"\b(NPs|NPp|NP|Np|N|V3|V|ADJ|ADV|PP|MOD|NUM|NAME|CONN)\b")


class Prose:
    """A deterministic writer of sentences, paragraphs and titles on one topic."""

    def __init__(self, topic: str, rng: random.Random) -> None:
        vocab = TOPICS[topic]
        self.rng = rng
        self.noun = _Picker(rng, vocab.nouns, GENERAL.nouns)
        self.verb = _Picker(rng, vocab.verbs, GENERAL.verbs)
        self.adjective = _Picker(rng, vocab.adjectives, GENERAL.adjectives)
        self.adverb = _Picker(rng, vocab.adverbs, GENERAL.adverbs)
        self._focus: list[str] = []
        self._slots: dict[str, Callable[[], str]] = {
            "NPs": self._np_singular,
            "NPp": self._np_plural,
            "NP": self._np,
            "Np": lambda: plural(self._topic_noun()),
            "N": self._topic_noun,
            "V3": lambda: third_person(self.verb()),
            "V": self.verb,
            "ADJ": self.adjective,
            "ADV": self.adverb,
            "PP": self._pp,
            "MOD": lambda: rng.choice(MODALS),
            "NUM": lambda: rng.choice(_NUMBERS),
            "NAME": self.person,
            "CONN": lambda: rng.choice(CONNECTIVES),
        }

    def new_page(self, focus: int = 8) -> None:
        """Pick the nouns the next page is mostly about."""
        self._focus = [self.noun() for _ in range(focus)]

    def person(self) -> str:
        """A full personal name."""
        return f"{self.rng.choice(FIRST_NAMES)} {self.rng.choice(LAST_NAMES)}"

    def place(self) -> str:
        """A (fictional) place name."""
        return self.rng.choice(PLACE_NAMES)

    def sentence(self) -> str:
        """One declarative sentence."""
        return self._fill(self.rng.choice(_STATEMENTS))

    def instruction(self) -> str:
        """One imperative sentence, as in a recipe method or a how-to."""
        return self._fill(self.rng.choice(_IMPERATIVES))

    def paragraph(self, low: int = 3, high: int = 7) -> str:
        """Between `low` and `high` sentences."""
        return " ".join(self.sentence() for _ in range(self.rng.randint(low, high)))

    def paragraphs(self, count: int, low: int = 3, high: int = 7) -> list[str]:
        """`count` paragraphs."""
        return [self.paragraph(low, high) for _ in range(count)]

    def title(self) -> str:
        """A short headline-like phrase."""
        pattern = self.rng.choice(
            (
                "ADJ N",
                "N and N",
                "ADJ N with N",
                "notes on ADJ Np",
                "how to V NP",
                "N Np",
                "the ADJ N",
                "V Np PP",
                "Np for ADJ Np",
            )
        )
        return title_case(self._expand(pattern))

    def phrase(self, words: int) -> str:
        """`words` content words, for labels and short descriptions."""
        picks = (self.adjective, self._topic_noun, self.verb, self._topic_noun)
        return " ".join(picks[i % len(picks)]() for i in range(words))

    def _fill(self, template: str) -> str:
        text = self._expand(template)
        return text[0].upper() + text[1:]

    def _expand(self, template: str) -> str:
        return _fix_articles(_SLOT.sub(lambda m: self._slots[m.group(1)](), template))

    def _topic_noun(self) -> str:
        if self._focus and self.rng.random() < 0.35:
            return self.rng.choice(self._focus)
        return self.noun()

    def _np_singular(self) -> str:
        det = self.rng.choice(DETERMINERS)
        form = self.rng.random()
        if form < 0.45:
            return f"{det} {self._topic_noun()}"
        if form < 0.8:
            return f"{det} {self.adjective()} {self._topic_noun()}"
        return f"{det} {self._topic_noun()} of the {self._topic_noun()}"

    def _np_plural(self) -> str:
        noun = plural(self._topic_noun())
        form = self.rng.random()
        if form < 0.35:
            return noun
        if form < 0.7:
            return f"{self.rng.choice(PLURAL_DETERMINERS)} {noun}"
        return f"{self.rng.choice(PLURAL_DETERMINERS)} {self.adjective()} {noun}"

    def _np(self) -> str:
        return self._np_singular() if self.rng.random() < 0.6 else self._np_plural()

    def _pp(self) -> str:
        return f"{self.rng.choice(PREPOSITIONS)} {self._np()}"
