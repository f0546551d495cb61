"""A pure-Python WordPiece encoder for ASCII text (BERT-style tokenizers), for fast start-up.

A cold ``ragit query`` embeds one short question; importing ``tokenizers`` and building the
tokenizer would cost more than everything else in the query. For ASCII input, BERT's
normaliser and pre-tokeniser reduce to a few plain rules (drop control characters, map
whitespace to spaces, lower-case, split on whitespace and isolate ASCII punctuation), followed
by greedy longest-match-first WordPiece; this module implements exactly that and yields the
same ids as ``tokenizers`` (tests compare them on real text). Any non-ASCII input, or a
tokenizer JSON of another shape, is left to ``tokenizers``. A tokenizer with a vocabulary file
(:mod:`ragit.embed.vocabfile`, the bundled models') is read from it instead of its JSON.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import vocabfile

# string.punctuation, written out: importing ``string`` compiles a regex (~0.5 ms of a cold query)
_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# ASCII control characters BERT's clean_text drops (tab, newline and carriage return become spaces).
_DROP = {c: None for c in range(32) if chr(c) not in "\t\n\r"} | {127: None}
_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_SPACES = str.maketrans({"\t": " ", "\n": " ", "\r": " "})


class WordPieceEncoder:
    """Token ids of an ASCII text, identical to ``Tokenizer.encode(text, add_special_tokens=False)``."""

    def __init__(self, vocab: dict[str, int] | vocabfile.SortedVocab, unk_id: int, prefix: str = "##",
                 max_chars: int = 100, specials: tuple[str, ...] = (), longest: int | None = None,
                 strip_accents: bool = False):
        """``vocab`` is only ever asked ``get``; ``longest`` (no entry is longer) when known;
        ``strip_accents``: the normaliser strips accents, so :meth:`plain_piece_ids` may
        tokenise a plain non-ASCII piece itself."""
        self.vocab = vocab
        self.strip_accents = strip_accents
        self.unk_id = unk_id
        self.prefix = prefix
        self.max_chars = max_chars
        # added tokens, matched in raw text before normalisation: text holding one is left to ``tokenizers``
        self.specials = tuple(dict.fromkeys((*_SPECIALS, *specials)))
        self._longest: int | None = longest  # no entry is longer (characters, counting its prefix)
        # ``vocab``'s lookup as a C-level ``dict.get`` once there is a dict (a ``SortedVocab``
        # builds one after many lookups), and the longest continuation entry (characters after
        # the prefix) known with it: a word's later pieces are searched from there down
        self._get: Any = vocab.get if isinstance(vocab, dict) else None
        self._longest_next: int | None = None

    @classmethod
    def from_tokenizer_json(cls, data: dict) -> "WordPieceEncoder | None":
        """An encoder for a BERT-style ``tokenizer.json``; None for any other configuration."""
        model = data.get("model") or {}
        normalizer = data.get("normalizer") or {}
        if (model.get("type") != "WordPiece" or normalizer.get("type") != "BertNormalizer"
                or not normalizer.get("lowercase") or not normalizer.get("clean_text")
                or (data.get("pre_tokenizer") or {}).get("type") != "BertPreTokenizer"):
            return None
        vocab = model.get("vocab")
        unk = model.get("unk_token")
        if not isinstance(vocab, dict) or unk not in vocab:
            return None
        # added tokens are matched before normalisation; with any beyond [PAD]/[UNK]-style
        # specials that cannot occur in plain text, defer to ``tokenizers``
        specials = []
        for token in data.get("added_tokens") or []:
            content = token.get("content", "")
            if not (content.startswith("[") and content.endswith("]") and token.get("special")):
                return None
            specials.append(content)
        strip = normalizer.get("strip_accents")  # None: as lowercase (which is on)
        return cls(vocab, vocab[unk], model.get("continuing_subword_prefix", "##"),
                   model.get("max_input_chars_per_word", 100), tuple(specials),
                   strip_accents=strip is None or strip is True)

    def encode(self, text: str) -> list[int] | None:
        """Ids of ``text``, or None when it is not ASCII (the caller uses ``tokenizers``)."""
        if not text.isascii():
            return None
        for special in self.specials:
            if special in text:
                return None  # added tokens are split out before normalisation: leave it to tokenizers
        clean = text.translate(_DROP).translate(_SPACES).lower()
        ids: list[int] = []
        for chunk in clean.split():
            self._add_chunk(chunk, ids)
        return ids

    def plain_piece_ids(self, piece: str) -> list[int] | None:
        """Ids of a piece without ASCII spaces that holds non-ASCII characters, as ``tokenizers``
        gives them, when each of those is plain (:func:`_plain_char`); else None (the caller
        uses ``tokenizers``). BERT's normaliser acts on such a character alone (accents stripped,
        then lower-cased), its pre-tokeniser splits the piece at punctuation, and WordPiece
        matches non-ASCII entries as it does ASCII ones."""
        if not self.strip_accents:
            return None
        chars = []
        for ch in piece:
            if ch.isascii():
                if ch in " \t\n\r":
                    return None
                if ch >= " " and ch != "\x7f":  # other ASCII controls are dropped
                    chars.append(ch.lower())
            else:
                plain = _plain_char(ch)
                if plain is None:
                    return None
                chars.append(plain)
        ids: list[int] = []
        for chunk in "".join(chars).split(" "):  # a non-ASCII space: words end there
            self._add_chunk(chunk, ids, wide=True)
        return ids

    def _add_chunk(self, chunk: str, ids: list[int], wide: bool = False) -> None:
        """Append the ids of a space-free ``chunk``: split at punctuation (each mark a word of
        its own), each word through WordPiece. ``wide``: non-ASCII punctuation splits too."""
        word: list[str] = []
        for ch in chunk:
            if ch in _PUNCTUATION or (wide and not ch.isascii() and _is_punctuation(ch)):
                if word:
                    self._wordpiece("".join(word), ids)
                    word = []
                self._wordpiece(ch, ids)
            else:
                word.append(ch)
        if word:
            self._wordpiece("".join(word), ids)

    def word_ids(self, word: str) -> list[int]:
        """Ids of one pre-tokenised word (lower-case, no space, punctuation alone)."""
        out: list[int] = []
        self._wordpiece(word, out)
        return out

    def _wordpiece(self, word: str, out: list[int]) -> None:
        """Greedy longest-match-first WordPiece of ``word`` (ids appended to ``out``). A match
        is searched from the longest slice an entry could be down: the whole word (or its first
        ``longest`` characters) first, then each continuation with the prefix in front of the
        rest, bounded by the longest continuation entry, so each try is one slice and one
        lookup (a new word of code costs a few µs: issue 15's first index)."""
        size = len(word)
        if size > self.max_chars or not size:
            if size:
                out.append(self.unk_id)
            return
        get = self._get or self._lookup()
        longest = self._longest
        if longest is None:
            longest = self._set_longest()
        end = size if size <= longest else longest
        while end:
            found = get(word[:end] if end < size else word)
            if found is not None:
                break
            end -= 1
        else:
            out.append(self.unk_id)
            return
        if end == size:  # the whole word is an entry: the common case
            out.append(found)
            return
        pieces = [found]
        prefix = self.prefix
        skip = len(prefix)
        bound = self._longest_next or longest
        start = end
        while start < size:
            rest = prefix + word[start:start + bound]  # every continuation tried from here
            stop = len(rest)
            while stop > skip:
                found = get(rest[:stop] if stop < len(rest) else rest)
                if found is not None:
                    break
                stop -= 1
            else:
                out.append(self.unk_id)
                return
            pieces.append(found)
            start += stop - skip
        out.extend(pieces)

    def use_dict(self) -> None:
        """Look every word up in a dict from now on (a caller about to tokenise many words).
        Once it does, nothing is left to do (the longest continuation is one pass over 30k
        entries, ~1.5 ms: an ingest asks before each large batch)."""
        if self._get is None and isinstance(self.vocab, vocabfile.SortedVocab):
            self.vocab.as_dict()
            self._lookup()

    def _lookup(self) -> Any:
        """The vocabulary's lookup: ``dict.get`` (kept) once a ``SortedVocab`` has its dict,
        else the ``SortedVocab``'s own (which counts lookups and builds the dict after many)."""
        vocab = self.vocab
        if isinstance(vocab, vocabfile.SortedVocab) and vocab.built():
            self._get = vocab.as_dict().get
            self._longest_next = _longest_after(vocab.as_dict(), self.prefix)
            return self._get
        return vocab.get

    def _set_longest(self) -> int:
        # No vocabulary entry is longer, so a longer slice is never looked up (a bound, not
        # the exact longest piece: a slice past the real one just misses, and one C-level
        # pass over 30k keys beats stripping each one's prefix in Python by ~5 ms)
        self._longest = max(map(len, self.vocab), default=0)  # type: ignore[arg-type]
        if isinstance(self.vocab, dict):
            self._longest_next = _longest_after(self.vocab, self.prefix)
        return self._longest


def _longest_after(vocab: dict[str, int], prefix: str) -> int | None:
    """Characters after ``prefix`` of the longest entry that starts with it (None: none does);
    one pass over the entries (~1.5 ms), once per encoder."""
    if not prefix:
        return None
    lengths = [len(token) for token in vocab if token.startswith(prefix)]
    return max(lengths) - len(prefix) if lengths else None


# The code point ranges BERT treats as Chinese characters (padded with spaces): left to ``tokenizers``.
_CJK = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0x2F800, 0x2FA1F))


@lru_cache(maxsize=4096)
def _plain_char(ch: str) -> str | None:
    """What BERT's normaliser makes of the non-ASCII ``ch`` when ``ch`` is plain: a space
    separator becomes ``" "``; a letter, number, punctuation or symbol its canonical
    decomposition without nonspacing marks, each character lower-cased alone. Plain means of
    the same category and decomposition in Unicode 3.2 as today (so every Unicode version
    ``tokenizers`` may use agrees), decomposing into such characters and nonspacing marks only,
    not a Chinese character and not capital sigma (whose lower case depends on its neighbours
    in Python). Else None: controls and format characters (dropped), marks, U+FFFD and
    anything younger go to ``tokenizers``."""
    import unicodedata

    old = unicodedata.ucd_3_2_0
    code = ord(ch)
    if ch == "\u03a3" or ch == "\ufffd" or any(lo <= code <= hi for lo, hi in _CJK):
        return None
    decomposed = unicodedata.normalize("NFD", ch)
    if decomposed != old.normalize("NFD", ch):
        return None
    category = unicodedata.category(ch)
    if category != old.category(ch):
        return None
    if category == "Zs":
        return " " if ch.isspace() and decomposed == ch else None
    for c in decomposed:
        category = unicodedata.category(c)
        if category != old.category(c) or (category[0] not in "LNPS" and (c == ch or category != "Mn")):
            return None
    lowered = [c.lower() for c in decomposed if unicodedata.category(c) != "Mn"]
    if any(len(c) != 1 for c in lowered):
        return None
    return "".join(lowered)


def _is_punctuation(ch: str) -> bool:
    """BERT's punctuation beyond ASCII: Unicode category P*."""
    import unicodedata

    return unicodedata.category(ch)[0] == "P"


def load_wordpiece(tokenizer_path: Path) -> WordPieceEncoder | None:
    """The Python encoder for a BERT-style tokenizer file, else None: from its vocabulary file
    when there is one for these exact bytes, else from the JSON."""
    raw = Path(tokenizer_path).read_bytes()
    stored = vocabfile.read(vocabfile.path_for(raw))
    if stored is not None:
        header, vocab = stored
        return WordPieceEncoder(vocab, header["unk_id"], header["prefix"], header["max_chars"],
                                tuple(header["specials"]), longest=header["longest"],
                                strip_accents=header.get("strip_accents", False))
    return WordPieceEncoder.from_tokenizer_json(json.loads(raw.decode("utf-8")))


def vocab_file_settings(encoder: WordPieceEncoder) -> dict[str, Any]:
    """What a vocabulary file keeps of an encoder besides its vocabulary."""
    return {"unk_id": encoder.unk_id, "prefix": encoder.prefix, "max_chars": encoder.max_chars,
            "specials": list(encoder.specials), "strip_accents": encoder.strip_accents}


def write_vocab_file(tokenizer_path: Path, directory: Path = vocabfile.DIRECTORY) -> Path | None:
    """Write the vocabulary file of a BERT-style ``tokenizer.json`` (None: not one, nothing written).
    Run for a new bundled tokenizer: ``python -c "from ragit.embed.wordpiece import write_vocab_file
    as w; from ragit.embed import CODE_DIR as d; print(w(d / 'tokenizer.json'))"``."""
    raw = Path(tokenizer_path).read_bytes()
    encoder = WordPieceEncoder.from_tokenizer_json(json.loads(raw.decode("utf-8")))
    if encoder is None or not isinstance(encoder.vocab, dict):
        return None
    data = vocabfile.render(encoder.vocab, vocab_file_settings(encoder))
    if data is None:
        return None
    path = vocabfile.path_for(raw, directory)
    path.write_bytes(data)
    return path
