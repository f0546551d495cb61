"""Is this a secret? Judgements on names and values that the masking rules share.

Regexes find candidates; these functions decide. They exist so that ordinary code stays
readable (knowledge §10.1 code mode): a value that is a reference, a template, a placeholder,
a word or a name is not a secret, and a name like ``token_type`` or ``password_file`` does not
hold one. Everything here is pure and cheap: it only runs on candidates.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import lru_cache

from ..lazyre import LazyPattern

MARKER = "***"


def masked_already(value: str) -> bool:
    """The value's secret part is ``***`` (maybe followed by a closing quote or bracket, or the
    backslash of an escaped quote, that a value pattern also took in): masking it again would
    change nothing worth counting (``Token=***\\`` must not become ``Token: ***``)."""
    return value.rstrip("\"'`;,)]}>\\").endswith(MARKER)

# Words that are configuration vocabulary, never a credential (YAML permissions, booleans,
# type names, placeholders people write instead of a value).
_VOCABULARY = frozenset("""
true false yes no on off null none nil undefined nan ~ required optional read write read-all
write-all inherit auto default env environment file string str text int integer bool boolean
bytes number object any secret secrets token tokens password passwd key keys apikey api_key
hidden masked redacted changeme change_me change-me example sample dummy fake placeholder
empty todo tbd xxx foo bar baz test testing public private basic bearer digest oauth oauth2
none-required disabled enabled enable disable
""".split())

_PLACEHOLDER = LazyPattern(
    r"(?i)^(?:<[^<>]*>|\[[^\[\]]*\]|your[-_ .][\w .-]*|.*(?:x{4,}|\.{3,}).*|\*+|"
    r"(?:change|replace)[-_ ]?me.*|.*(?:placeholder|example|redacted|dummy).*)$"
)
# Values that are not literals at all: shell/CI/template references and format strings.
_TEMPLATE = LazyPattern(
    r"^(?:\$[{(\w]|\$\$|\{\{|\{%|<%|#\{|@\{|%\(|%[sdvr]$)|\{\{|\$\{|\{[A-Za-z_][\w.\[\]]*\}|%\(\w+\)[sdr]|%[sdv](?:$|[^A-Za-z0-9])"
)
_ENV_NAME = LazyPattern(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_IDENT_CHAIN = LazyPattern(r"^[A-Za-z_][A-Za-z_]*(?:(?:\.|::|->)[A-Za-z_][A-Za-z_0-9]*)+$")
_CALL_OR_SUBSCRIPT = LazyPattern(r"^[A-Za-z_][\w.]*(?:\(|\[|=(?!=*$))")
_IDENTIFIER = LazyPattern(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WORDY = LazyPattern(r"^[A-Za-z]+(?:[-_. /:@+][A-Za-z]+)*[-_.]?$")
_VERSION = LazyPattern(r"^v?\d+(?:\.\d+)+(?:[-+.\w]*)$")
_PATH = LazyPattern(r"^(?:/|\./|\.\./|~/|[A-Za-z]:\\)|^[\w.-]+\.(?:pem|key|crt|cer|p12|pfx|json|ya?ml|txt|env|ini|cfg|conf|toml|gpg|asc|jks|keystore)$")
_URL = LazyPattern(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_SECRET_WORD_IN_NAME = LazyPattern(r"(?i)passw(?:or)?d|secret|token|api_?key|credential|auth")

# Name segments that hold a secret, alone or at the end of an all-lower-case compound word
# ("dbpassword", "githubtoken").
_SECRET_SEGMENTS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "accesskey",
                    "privatekey", "secretkey", "signingkey", "authkey", "credential",
                    "credentials", "creds", "pwd", "dsn")
_EXACT_SEGMENTS = frozenset({"pass", "pw", "auth", "authorization", "cred"})
# A first segment that makes the name a quantity: max_tokens, num_secret_shares.
_QUANTITIES = frozenset({"max", "min", "num", "n", "total", "count"})
# Pairs of adjacent segments that name a key: api_key, AccessKey, private-key, ...
_KEY_QUALIFIERS = frozenset({"api", "access", "private", "secret", "signing", "encryption", "master",
                             "account", "app", "client", "license", "auth", "session", "service",
                             "shared", "storage", "subscription", "webhook", "hmac", "jwt", "admin",
                             "write", "deploy", "consumer", "primary", "secondary", "sas", "x-api"})
# A name whose last segment is one of these describes a secret, it does not hold one.
_NOT_HOLDERS = frozenset("""
type types url uri urls endpoint endpoints file files path paths dir env var vars name names
field fields header headers length len size count prefix suffix format kind mode method
methods style policy ttl expiry expires expiration lifetime timeout limit id ids index enabled
required regex pattern placeholder label description help hint message msg error errors text
title usage example template schema class module version provider source store manager cache
callback handler factory generator validator getter setter fn func function attr attribute
algorithm algorithms alg algo cipher digest scheme schemes encoding charset audience issuer
scope scopes grant realm domain host hostname port user username login email location
param params parameter option options config setting settings flag flags max min check
checker request response url_template service services ref reference selector mount volume
exists present set missing valid invalid policy rule rules lookup getter length hash hashes
strength complexity reset rotation rotate refresh_url store_path manager_url cmd command
py pyi js jsx ts tsx go rs rb java kt php cs c h cc cpp hpp swift md rst txt json yaml yml toml
ini cfg conf xml html css sh lock log csv sql
""".split())
_CAMEL = LazyPattern(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEGMENT_SPLIT = LazyPattern(r"[_.\-\s\[\]'\"]+")


@lru_cache(maxsize=4096)
def secret_name(name: str) -> bool:
    """Does a key named ``name`` hold a secret (``DB_PASS``, ``apiKey``, ``client-secret``)?

    Not when its last segment says it describes one (``token_type``, ``password_file``)."""
    segments = [s for s in _SEGMENT_SPLIT.split(_CAMEL.sub("_", name).lower()) if s]
    if not segments or segments[0] in _QUANTITIES:
        return False
    hit = -1
    for i, seg in enumerate(segments):
        if seg in _EXACT_SEGMENTS or seg.endswith(_SECRET_SEGMENTS):
            hit = i
        elif seg == "key" and i > 0 and segments[i - 1] in _KEY_QUALIFIERS:
            hit = i
    if hit < 0:
        return False
    return hit == len(segments) - 1 or segments[-1] not in _NOT_HOLDERS


def names_itself(name: str, value: str) -> bool:
    """A word-like value that repeats its key's name (``AuthUserKey = "user"``,
    ``"authorization": "proxy-authorization"``) is a name, not a credential."""
    if not _WORDY.match(value):
        return False
    flat_name = re.sub(r"[^a-z0-9]", "", name.lower())
    flat_value = re.sub(r"[^a-z0-9]", "", value.lower())
    return bool(flat_value) and (flat_value in flat_name or flat_name in flat_value)


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def is_template(value: str) -> bool:
    """``$VAR``, ``${VAR}``, ``$(cmd)``, ``${{ secrets.X }}``, ``{{ x }}``, ``{name}``, ``%s``."""
    return _TEMPLATE.search(value) is not None


def is_reference(value: str) -> bool:
    """Code, not a literal: a call, subscript or attribute chain, an env-var name, a YAML key,
    a block-scalar indicator, or an identifier that spells a secret's name (``access_token``)."""
    if value.endswith(":") or value in ("|", ">", "|-", ">-", "|+", ">+"):
        return True
    if _CALL_OR_SUBSCRIPT.match(value) or _IDENT_CHAIN.match(value) or _ENV_NAME.match(value):
        return True
    return _IDENTIFIER.match(value) is not None and _SECRET_WORD_IN_NAME.search(value) is not None


def is_placeholder(value: str) -> bool:
    """Configuration vocabulary or a stand-in for a value (``true``, ``<token>``, ``changeme``)."""
    return value.lower() in _VOCABULARY or _PLACEHOLDER.match(value) is not None


def not_a_literal(value: str) -> bool:
    """Exempt in every mode: already masked, a template, a reference or a placeholder."""
    return (masked_already(value) or is_template(value) or is_reference(value)
            or is_placeholder(value))


def random_enough(value: str) -> bool:
    """A token body should look random: letters and digits, or high entropy."""
    if value.isdigit():
        return True
    has_digit = any(ch.isdigit() for ch in value)
    has_alpha = any(ch.isalpha() for ch in value)
    if has_digit and has_alpha:
        return True
    return entropy(value) >= 3.5


def code_literal_secret(value: str) -> bool:
    """A quoted literal in code that looks like a credential, not like a word, header name,
    version, path or URL: at least 6 characters, no whitespace, some randomness."""
    if len(value) < 6 or any(ch.isspace() for ch in value) or not_a_literal(value):
        return False
    if _VERSION.match(value) or _PATH.match(value) or _URL.match(value):
        return False
    if _WORDY.match(value):
        return len(value) >= 20 and entropy(value) >= 3.8 and not value.islower()
    return random_enough(value) or entropy(value) >= 3.0


def data_literal_secret(value: str) -> bool:
    """A literal in a data or config file (YAML, JSON, .env, TOML, INI): anything but a
    reference, template, placeholder, path, URL, a value of under four characters, or words
    with blanks between them (prose, not a credential)."""
    if len(value) < 4 or not_a_literal(value):
        return False
    if any(ch.isspace() for ch in value) and _WORDY.match(value.replace(" ", "-")):
        return False
    return not (_PATH.match(value) or _URL.match(value) or _VERSION.match(value))
