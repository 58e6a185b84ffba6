"""Secrets and sensitive identifiers, which memory never keeps.

Credentials (API keys and tokens by known prefix or by length and entropy, passwords
said as such, private keys) and identifiers whose leak harms the user (Chinese
resident ID numbers with a valid check digit, US social security numbers, payment
card numbers that pass the Luhn check). A refused write keeps only the kind and a
hash in the audit trail, never the text.
"""

from __future__ import annotations

import math
import re
from collections import Counter

import unicodedata

from ..model.folding import sanitize

_PREFIXED = re.compile(
    r"\b(?:sk-(?:proj-|ant-|live-|test-)?[A-Za-z0-9_\-]{16,}|(?:pk|rk|sk)_(?:live|test)_[A-Za-z0-9]{16,}|"
    r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_\-]{16,}|"
    r"xox[abposr]-[A-Za-z0-9\-]{10,}|(?:AKIA|ASIA)[A-Z0-9]{16}|AIza[A-Za-z0-9_\-]{30,}|"
    r"ya29\.[A-Za-z0-9_\-]{20,}|hf_[A-Za-z0-9]{20,}|npm_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{16,}|"
    r"(?:AC|SK)[0-9a-f]{32}|"
    r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})"
)
_URL_PASSWORD = re.compile(r"\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:([^\s@/]{3,})@", re.I)
_CONTEXT_HEX = re.compile(r"\b(?:token|key|secret|auth|bearer|api|password|passwd|pw|signature|sig)\b[^\n]{0,30}?"
                          r"\b([0-9a-f]{24,}|[A-Za-z0-9_\-]{20,})\b", re.I)
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z ]+ )?PRIVATE KEY-----|\bssh-(?:rsa|ed25519) AAAA[A-Za-z0-9+/]{20,}")
_PASSWORD = re.compile(
    r"\b(?:password|passwd|pwd|pw|passcode|passphrase|pin(?: code| number)?|secret|api[ _-]?key|access[ _-]?token|"
    r"auth[ _-]?token|token)\b\s*(?P<said>is|was|=|:|：|is set to|is now|reads|of)?\s*[\"'“‘]?(\S{4,})|"
    r"(?:密码|口令|密钥|秘钥|私钥|支付密码|登录密码|取款密码|验证码|令牌|\btoken\b|\bpin(?:码|\b))\s*(?:是|为|=|:|：|改成了?|设成了?|设置为|"
    r"我设的是|设的是|就是)?\s*(\S{4,})",
    re.I,
)


def _password_like(value: str, *, said: bool = True) -> bool:
    """A value that is a password, not a word: "hunter2", "Tr0ub4dor&3", "88886666qw",
    "CorrectHorseBattery", "Sunflower" when given as one — not "saved", "in Bitwarden",
    "记在密码管理器里的", nor "Document" in "Secret Document" (``said``: a copula or colon
    introduced the value)."""
    value = re.split(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]", value)[0]  # "739215#，保洁阿姨…": up to the Chinese
    value = value.strip("\"'“”‘’.,;。，；")
    if len(value) < 4:
        return False
    # a capitalised word counts when it is given as the value ("password is Sunflower"), not
    # when it merely follows the word ("Secret Document"): then the capital must be inside it
    cased = value if said else value[1:]
    return bool(re.search(r"\d", value) or (re.search(r"[^\w]", value) and len(value) >= 6)
                or (re.search(r"[a-z]", value) and re.search(r"[A-Z]", cased) and len(value) >= 8))


_CN_ID = re.compile(r"(?<![0-9])[1-9]\d{5}(?:18|19|20)\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])\d{3}[\dXx](?![0-9])")
_SSN = re.compile(r"(?<![0-9])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![0-9])")
_SSN_WORDED = re.compile(r"\b(?:ssn|social security(?: number| no\.?)?)\b\D{0,12}\d{9}\b", re.I)
_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=]{16,}")

_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def _cn_id_valid(number: str) -> bool:
    total = sum(int(d) * w for d, w in zip(number[:17], _CN_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == number[17].upper()


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def _looks_random(token: str) -> bool:
    """A long run mixing letter cases and digits with high entropy: a key, not a word."""
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"\d"))
    if classes < 3 or len(token) < 16:
        return False
    if re.fullmatch(r"[0-9a-f\-]+", token):  # hex ids, UUIDs, hashes are identifiers, not secrets
        return False
    return _entropy(token) >= (3.8 if len(token) < 24 else 4.0)


_DIGIT_RUN = re.compile(r"(?<![\w.])\d[\d \t.\-/／]{8,}\d(?![\w])|(?<![\w])\d{6}[ \t\-]?\d{8}[ \t\-]?\d{3}[\dXx]")


# A number the user names as an identifier or a code is refused whatever its checksum says:
# "my credit card number is 4111 1111 1111 1111", "身份证号是 110101199003071234", "the door code is 4821".
_WORDED_NUMBER = re.compile(
    r"(?:credit card|debit card|bank card|card|account|routing|iban|passport|driver'?s licen[cs]e|social security|ssn|"
    r"national id|身份证|银行卡|卡号|信用卡|储蓄卡|账号|账户|护照|社保|医保|驾驶证)\s*(?:number|no\.?|#|号码|号)?\s*"
    r"(?:is|was|是|为|:|：|=)\s*[A-Za-z]?\d[\d\s\-]{5,}|"
    r"(?:door|gate|alarm|lock|safe|garage|locker|building|门禁|门锁|保险箱|保险柜|密码锁)\s*(?:code|pin|combination|密码|码)\s*"
    r"(?:is|was|是|为|:|：|=)\s*\d{3,}", re.I)


# Latin look-alikes from Cyrillic and Greek ("pаssword" with a Cyrillic а reads as "password")
_LOOKALIKES = str.maketrans("аеорсухіјѕкмтвнАЕОРСУХІЈЅКМТВНαοριτυνκεΑΒΕΗΙΚΜΝΟΡΤΥΧ",
                            "aeopcyxijskmtbhAEOPCYXIJSKMTBHaopitunkeABEHIKMNOPTYX")


def _skeleton(text: str) -> str:
    """``text`` with combining marks dropped and Cyrillic/Greek look-alikes read as Latin."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn").translate(_LOOKALIKES)


def find_secret(text: str) -> str | None:
    """The kind of secret found in ``text`` (``api_key``, ``private_key``, ``password``,
    ``national_id``, ``payment_card``, ``token``), or ``None``. Digits are read with
    spaces, dots, dashes and slashes between them removed ("4716.5208.3917.2545",
    "320502 19880316 2718"); the words that name a secret are also read through
    look-alike letters and combining marks ("pаssword", "páśsword")."""
    t = unicodedata.normalize("NFKC", sanitize(text or ""))
    found = _find_secret(t)
    if found is None:
        skeleton = _skeleton(t)
        if skeleton != t:
            found = _find_secret(skeleton)
    return found


def _find_secret(t: str) -> str | None:
    if _PRIVATE_KEY.search(t):
        return "private_key"
    if _PREFIXED.search(t):
        return "api_key"
    if _URL_PASSWORD.search(t):
        return "password"
    for m in _PASSWORD.finditer(t):
        # "secret Document" (no "is", no colon) names a thing; "password is Sunflower" gives one
        if _password_like(m.group(2) or m.group(3) or "", said=m.group(1) is not None or m.group(3) is not None):
            return "password"
    for m in _CONTEXT_HEX.finditer(t):
        if re.search(r"\d", m.group(1)) and len(set(m.group(1))) >= 8:
            return "token"
    if _WORDED_NUMBER.search(t):
        return "national_id" if re.search(r"身份证|passport|护照|social|ssn|national|社保|医保|驾驶证|licen", t, re.I) else \
            "payment_card" if re.search(r"card|卡|account|账号|账户|routing|iban", t, re.I) else "password"
    if _SSN_WORDED.search(t) or re.search(r"\b(?:ssn|social(?: security)?)\b\D{0,16}\d{3}[ \-]\d{2}[ \-]\d{4}\b", t, re.I):
        return "national_id"
    for m in _DIGIT_RUN.finditer(t):
        run = m.group(0)
        digits = re.sub(r"[^\dXx]", "", run)
        if len(digits) == 18 and _CN_ID.fullmatch(digits) and _cn_id_valid(digits):
            return "national_id"
        only = re.sub(r"\D", "", run)
        if 13 <= len(only) <= 19 and _luhn(only) and len(set(only)) > 2 and (len(only) == len(digits)):
            return "payment_card"
    for m in _CN_ID.finditer(t):
        if _cn_id_valid(m.group(0)):
            return "national_id"
    if _SSN.search(t):
        return "national_id"
    if any(_looks_random(tok) for tok in _TOKEN.findall(t)):
        return "token"
    return None
