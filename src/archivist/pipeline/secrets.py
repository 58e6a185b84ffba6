"""Secrets and sensitive identifiers, which memory never keeps.

Credentials (API keys and tokens by known prefix — ``detect-secrets``' credential
detectors — or by length and entropy, passwords and PINs said as such in English,
Chinese and the other languages listed in :data:`_SECRET_WORDS`, login and password
pairs, private keys, BIP-39 recovery phrases from ``mnemonic``'s word lists) and
identifiers whose leak harms the user, by their check digits with ``python-stdnum``:
IBANs, payment cards (Luhn, also when the number is split over sentences), Chinese
resident ids, Spanish DNI/NIE, US social security numbers, and any number named as an
id, card, account or code. A refused write keeps only the kind and a hash in the
audit trail, never the text.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from typing import Any

from stdnum import iban, luhn
from stdnum.br import cpf
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.kr import rrn
from stdnum.tr import tckimlik

from ..model.folding import sanitize
from ..model.prefilter import prefiltered

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
    r"\b(?:password|passwd|pwd|pw|pass(?=\s*[:=：])|passcode|passphrase|pin(?: code| number)?|secret|api[ _-]?key|access[ _-]?token|"
    r"passwort|kennwort|contrase[ñn]a|clave|mot de passe|mdp|senha|wachtwoord|l[öo]senord|has[łl]o|parola|[şs]ifrem?|"
    r"salasana|adgangskode|passord|heslo|jelszó|пароль|пин-?код|"
    r"auth[ _-]?token|token)\b\s*(?P<said>is|was|=|:|：|is set to|is now|reads|of|ist|lautet|war|es|era|est|é|"
    r"é a|это|—)?\s*[\"'“‘]?(\S{4,})|"
    r"(?:密码|口令|密钥|秘钥|私钥|支付密码|登录密码|取款密码|验证码|令牌|暗証番号|パスワード|비밀번호|암호|\btoken\b|"
    r"\bpin(?:码|\b))\s*(?:は|는|은|:|：)?\s*(?:是|为|=|:|：|改成了?|设成了?|设置为|"
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


_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_DIGIT_RUN = re.compile(r"(?<![\w.])\d[\d \t.\-/／]{8,}\d(?![\w])|(?<![\w])\d{6}[ \t\-]?\d{8}[ \t\-]?\d{3}[\dXx]")


# A number the user names as an identifier or a code is refused whatever its checksum says:
# "my credit card number is 4111 1111 1111 1111", "身份证号是 110101199003071234", "the door code is 4821".
_WORDED_NUMBER = prefiltered(re.compile(
    r"(?:credit card|debit card|bank card|card|account|routing|iban|passport|driver'?s licen[cs]e|social security|ssn|"
    r"national id|身份证|银行卡|卡号|信用卡|储蓄卡|账号|账户|护照|社保|医保|驾驶证)\s*(?:number|no\.?|#|号码|号)?\s*"
    r"(?:is|was|是|为|:|：|=)\s*[A-Za-z]?\d[\d\s\-]{5,}|"
    r"(?:door|gate|alarm|lock|safe|garage|locker|building|门禁|门锁|保险箱|保险柜|密码锁)\s*(?:code|pin|combination|密码|码)\s*"
    r"(?:is|was|是|为|:|：|=)\s*\d{3,}", re.I))


# Latin look-alikes from Cyrillic and Greek ("pаssword" with a Cyrillic а reads as "password")
_LOOKALIKES = str.maketrans("аеорсухіјѕкмтвнАЕОРСУХІЈЅКМТВНαοριτυνκεΑΒΕΗΙΚΜΝΟΡΤΥΧ",
                            "aeopcyxijskmtbhAEOPCYXIJSKMTBHaopitunkeABEHIKMNOPTYX")


def _skeleton(text: str) -> str:
    """``text`` with combining marks dropped and Cyrillic/Greek look-alikes read as Latin."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn").translate(_LOOKALIKES)


# The words that name a password or a PIN in the languages above, for a value written
# with spaces ("my PIN is 4 8 2 1") or a login given with it.
_SECRET_WORDS = (r"password|passwd|pwd|pw|pass(?=\s*[:=：])|passcode|pin(?: code| number)?|passwort|kennwort|contrase[ñn]a|clave|"
                 r"mot de passe|mdp|senha|wachtwoord|parola|пароль|пин-?код|密码|口令|暗証番号|パスワード|비밀번호|암호")
# One-time codes and document numbers said as such: "the 2FA code … is 839201", "passport no. X1234567".
_CODES = prefiltered(re.compile(r"\b(?:2fa|mfa|otp|one-time|one time|verification|security|confirmation|auth(?:entication)?|sms|"
                    r"login|access)\s+(?:code|pin|token)\b[^.\n]{0,40}?\b\d{3,4}\s?\d{2,4}\b|"
                    r"\bcode\b[^.\n]{0,40}?\b(?:texted|sent|sms)\b[^.\n]{0,30}?\b\d{3}\s?\d{3}\b|"
                    r"\b(?:texted|sent)\s+me\b[^.\n]{0,20}?\b\d{3}\s?\d{3}\b|"
                    r"(?:验证码|校验码|动态码|安全码)[^。\n]{0,12}?\d{3,4}\s?\d{2,4}|"
                    r"\bpassport\s*(?:no\.?|number|num|#)?\s*(?:is\s+|:\s*)?[A-Z]{0,2}\d{6,9}\b|护照号?(?:码)?\s*(?:是|:|：)?\s*"
                    r"[A-Z]{0,2}\d{6,9}", re.I))
# A password given after an arrow, a dash, or "for the router is".
_PASSWORD_GIVEN = re.compile(rf"(?:{_SECRET_WORDS})\b[^.\n]{{0,30}}?(?:→|->|=>|–|—|\s-\s|[:：=]|\s(?:is|ist|lautet|es|est|é|"
                             rf"c'est|era|è|это|は|是|为)\s|\bfor\s+(?:the\s+|my\s+)?\w+(?:\s+\w+)?\s+(?:is|are)\b)"
                             rf"\s*[\"'“‘]?(\S{{4,}})", re.I)
# A credential given by its name, with what it is for between: "the API key for my weather
# app is 7f3e2a91c04b58d6", "the token of the CI runner: 9b1c…", "天气应用的 API key 是 …".
# What lies between names what the credential is for: no clause break, and no word that names
# another value ("the request id was …", "the ticket is …", "the token for my order is …").
_OTHER_VALUE = (r"id|ids|number|no|ticket|ref|reference|order|booking|job|run|request|commit|hash|fix|count|limit|"
                r"leak|refactor|rotation|name|version|usage|cost|price|invoice|tracking|session|build|issue|label|"
                r"branch|endpoint|address|contract|tag|image|object|pivot|link|url|path|file|grammar|playlist|field|"
                r"column|row|bucket")
# a key or token of data, not a credential: "the primary key", "the public key", "the Redis key"
_DATA_KEY = re.compile(r"\b(?:public|primary|foreign|sort|partition|redis|s3|composite|unique|index|cache|row|table|"
                       r"column|object|music|piano|answer|excel|map|dict|json)\s*$", re.I)
_KEY_GIVEN = prefiltered(re.compile(
    r"(?:(?<![A-Za-z])(?:api[ _-]?key|apikey|access[ _-]?(?:key|token)|auth(?:entication)?[ _-]?token|secret[ _-]?key|"
    r"client[ _-]?secret|app[ _-]?secret|bearer[ _-]?token|webhook[ _-]?secret|signing[ _-]?secret|token|"
    r"(?:key|secret)(?=\s+(?:for|of)\b))s?(?![A-Za-z])|密钥|秘钥|令牌)"
    rf"(?:(?!\b(?:{_OTHER_VALUE})\b)[^.\n;,!?，。；！？]){{0,48}}?"
    r"(?:\s(?:is|was|=|is now|equals|reads)\s|\s?[:：=→]|\s?(?:是|为|為))\s*"
    r"[\"'“‘`«「]?([A-Za-z0-9_\-+/=.]{10,})", re.I))
_KEY_RUN = re.compile(r"[A-Za-z0-9]{10,}")


def _key_shaped(value: str) -> bool:
    """A key's value: a run of ten letters and digits that mixes both, or pieces that mix
    them joined by dashes or underscores ("7f3e-2a91-c04b-58d6"); a key's name made of
    words and numbers ("prod-key-2024") is not."""
    def mixed(run: str) -> bool:
        return bool(re.search(r"\d", run) and re.search(r"[A-Za-z]", run))

    if any(mixed(run) and len(set(run.lower())) >= 6 for run in _KEY_RUN.findall(value)):
        return True
    pieces = [p for p in re.split(r"[-_]", value) if p]
    joined = "".join(pieces)
    return len(pieces) >= 3 and sum(mixed(p) for p in pieces) >= 2 and len(joined) >= 12 and len(set(joined.lower())) >= 6


# A login given with its password without the word ("Netflix login is jenny@x.org / Sunflower!88"),
# a lock's combination, the start or end of a PIN or code.
_LOGIN_GIVEN = re.compile(r"\b(?:login|log-?in|sign-?in|credentials?|account|user(?:name)?|账号|帐号|登录)\b[^\n]{0,20}?"
                          r"\S{1,64}@\S{1,64}|\b(?:login|log-?in|credentials?)\s*(?:is|:)\s*\S{3,}\s*[/|]\s*(\S{6,})", re.I)
_LOGIN_PAIR2 = re.compile(r"[^\s@]{1,64}@[^\s@]{1,64}\.\w{1,24}\s*[/|:,]\s*(\S{6,64})")
_COMBINATION = re.compile(r"\b(?:safe|lock|padlock|locker|vault)\b[^.\n]{0,40}?\b\d{1,3}\s*(?:left|right|l|r)\b[^.\n]{0,12}?"
                          r"\d{1,3}\s*(?:left|right|l|r)\b|保险(?:箱|柜).{0,20}\d{1,3}.{0,4}[左右].{0,6}\d{1,3}", re.I)
_PARTIAL_PIN = prefiltered(re.compile(rf"(?:{_SECRET_WORDS}|code|combination|密码|口令)\b[^.\n。]{{0,40}}?(?:starts?|begins?|ends?|first|last)\s+"
                          r"(?:\w+\s+){0,3}?(?:with\s+|are\s+|is\s+)?(?<![A-Za-z0-9])\d{2,}(?![A-Za-z])|(?:密码|口令)[^。\n]{0,20}?(?:开头|结尾|前|后)[^。\n]{0,6}?\d{2,}",
                          re.I))
_CODE_WORDS = (r"(?:unlock|door|gate|keypad|alarm|lock|safe|access|entry|garage|phone|locker)\s+(?:code|pin|combination|"
               r"password|passcode)|keypad|disarm(?:\s+with)?|门禁(?:密码|码)?|门锁|电子锁|密码锁")
_SPACED_PIN = re.compile(rf"(?<![a-z])(?:{_SECRET_WORDS}|{_CODE_WORDS})(?![a-z])[^.\n。]{{0,40}}?(?:is|was|ist|es|est|é|は|는|은|是|为|改成了?|"
                         rf"设成了?|:|：|=|with)?\s*(?<![A-Za-z0-9])(?:\d[\s.\-]?){{4,}}(?![A-Za-z])|"
                         rf"(?:{_SECRET_WORDS}|{_CODE_WORDS})\b[^.\n。]{{0,30}}?(?:is|:|：|是|为)\s*(?:(?:zero|oh|one|two|three|"
                         rf"four|five|six|seven|eight|nine)[\s,-]+){{3,}}(?:zero|oh|one|two|three|four|five|six|seven|eight|"
                         rf"nine)\b|(?:{_SECRET_WORDS}|{_CODE_WORDS})[^。\n]{{0,12}}?(?:[零一二三四五六七八九〇两]\s*){{4,}}", re.I)
_LOGIN_PAIR = re.compile(r"\b(?:login|user(?:name)?|user id|account|e-?mail|benutzer(?:name)?|usuario|identifiant|"
                         r"логин|用户名|账号|帐号)\b\s*(?:is|:|：|=|是)?\s*\S{2,}[\s,;/|]+(?:and\s+)?(?:the\s+)?"
                         rf"(?:{_SECRET_WORDS})\b\s*(?:is|:|：|=|是)?\s*\S{{3,}}", re.I)
_CARD_WORDS = re.compile(r"\b(?:card|visa|mastercard|amex|maestro|discover|cc|number|digits|rest|remaining|ends?)\b|"
                         r"卡|卡号|号码|尾号|后几位|剩下", re.I)
_DIGIT_GROUP = re.compile(r"(?<![\w.\-])\d{3,}(?:[ \-.]\d{3,})*(?![\w])")  # standalone runs, not ids or hashes
# on upper-cased text: a country code, check digits, then 11 to 30 letters or digits with
# any one separator between them (spaces, dashes, dots, slashes, a line break); the match
# may run on into the words after it, so each of its prefixes is tried
_IBAN = re.compile(r"(?<![A-Z0-9])[A-Z]{2}[\s\-./]?\d{2}(?:[\s\-./]?[A-Z0-9]){11,30}")
_DNI = re.compile(r"\b[XYZ]?\d{7,8}[- ]?[A-Z]\b")
_WORD = re.compile(r"[^\W\d_]+")


@functools.lru_cache(maxsize=1)
def _credential_detectors() -> tuple[Any, ...]:
    """detect-secrets' detectors of known credential formats (not its keyword and entropy
    guesses, nor public IPs: those are read here with the words that name them)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    skip = {"KeywordDetector", "Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"}
    return tuple(cls() for cls in get_mapping_from_secret_type_to_class().values() if cls.__name__ not in skip)


@functools.lru_cache(maxsize=1)
def _bip39() -> frozenset[str]:
    from mnemonic import Mnemonic

    words: set[str] = set()
    for language in ("english", "spanish", "french", "italian", "portuguese", "czech", "turkish"):
        words |= set(Mnemonic(language).wordlist)
    return frozenset(words)


_NAMED_PHRASE = prefiltered(re.compile(r"\b(?:seed|recovery|backup|secret|mnemonic|wallet)\s+(?:phrase|words|key)\b|\bmnemonic\b|"
                           r"\b(?:ledger|trezor|metamask|wallet)\b|助记词|恢复短语|种子短语", re.I))


def _recovery_phrase(text: str) -> bool:
    """A wallet's seed: twelve or more words in a row every one from a BIP-39 word list, or,
    in a text that names a seed, recovery phrase or wallet, twelve words in a row of which
    at least eight are."""
    words, run, known, named = _bip39(), 0, [], bool(_NAMED_PHRASE.search(text))
    for w in _WORD.findall(text.lower()):
        run = run + 1 if w in words and len(w) >= 3 else 0
        if run >= 12:
            return True
        known = (known + [w in words])[-12:]
        if named and len(known) == 12 and sum(known) >= 8:
            return True
    return False


def _known_credential(text: str) -> bool:
    for piece in (text[i:i + 2000] for i in range(0, len(text), 1800)):
        for detector in _credential_detectors():
            try:
                if detector.analyze_line(filename="memory", line=piece):
                    return True
            except Exception:  # a detector that cannot read a line reads nothing in it
                continue
    return False


def _split_card(text: str) -> bool:
    """A card number given in pieces ("starts with 4111 1111. The rest is 1111 1111."):
    consecutive digit groups that together pass the Luhn check, in a text that names a card."""
    if not _CARD_WORDS.search(text):
        return False
    groups = [re.sub(r"\D", "", g) for g in _DIGIT_GROUP.findall(text)]
    for i in range(len(groups)):
        joined = ""
        for group in groups[i:i + 6]:
            joined += group
            if len(joined) > 19:
                break
            if 13 <= len(joined) and len(set(joined)) > 1 and luhn.is_valid(joined) and len(groups) > 1:
                return True
    return False


_CPF = re.compile(r"\b\d{3}\.\d{3}\.\d{3}-\d{2}\b")


_SPACED_DIGITS = re.compile(r"(?<![\d.])\d[\d \-.]{9,22}\d(?![\d])")
_HEX_TOKEN = re.compile(r"[0-9a-f]*[a-f][0-9a-f]*", re.I)


def _in_hex_token(text: str, m: re.Match[str]) -> bool:
    """Whether the digits of ``m`` are part of a run of hex digits with a letter in it."""
    start, end = m.start(), m.end()
    while start > 0 and text[start - 1].isascii() and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isascii() and text[end].isalnum():
        end += 1
    token = text[start:end]
    return token != m.group(0) and bool(_HEX_TOKEN.fullmatch(token))


def _standard_number(text: str) -> str | None:
    upper = text.upper()
    for m in _SPACED_DIGITS.finditer(text):  # national ids written with spaces or dashes
        if _in_hex_token(text, m):  # "c28039246824": a hex identifier ("TC10000000146" is an id)
            continue
        digits = re.sub(r"\D", "", m.group(0))
        if (len(digits) == 15 and nir.is_valid(digits)) or (len(digits) == 13 and rrn.is_valid(digits)) or \
                (len(digits) == 11 and tckimlik.is_valid(digits)):
            return "national_id"
    for m in _CPF.finditer(text):
        if cpf.is_valid(m.group(0)):
            return "national_id"
    for m in _IBAN.finditer(upper):
        compact = re.sub(r"[\s\-./]", "", m.group(0))
        # an IBAN with its country's length and layout and check digits that hold (the
        # country's own inner check aside): any letters and digits pass the check digits
        # alone one time in 97
        if any(iban.is_valid(compact[:n], check_country=False) for n in range(15, min(len(compact), 34) + 1)):
            return "bank_account"
    for m in _DNI.finditer(upper):
        if dni.is_valid(m.group(0)) or nie.is_valid(m.group(0)):
            return "national_id"
    return None


# A password by its shape, with or without a word that names it ("The thing I type to unlock
# my laptop is BlueHorse#19.", "Credentials for the staging DB: admin / Winter2024!"): one
# token of upper and lower case letters, digits and a symbol inside it; or, where the text
# speaks of unlocking, signing in or credentials, a token of letters and digits with a
# symbol anywhere or mixed case.
_TOKEN_CHAR = r"[^\s\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"
_TOKENS = re.compile(rf"(?<!{_TOKEN_CHAR})[^\s\u3000-\u303f\u4e00-\u9fff\uff00-\uffef\d]*\d{_TOKEN_CHAR}*")  # from a token's start
# (every password this reads holds a digit: only the tokens with one are looked at)
_SYMBOLS = frozenset("!#$%&*+=?@^~")
_INSIDE = frozenset("!#$%&*+?@^~")  # "=" inside a token is more often code ("timeout=30") than a password
_PASSWORD_CHARS = re.compile(r"[A-Za-z0-9!#$%&*+=?@^~._-]+")  # brackets, pipes, slashes: code or a pattern
# what a password opens: a token of letters and digits given near these is one when it
# mixes case; near words of signing in (a user name is given there too) it needs a symbol
_UNLOCK_WORDS = re.compile(r"\b(?:unlock\w*|credentials?|creds|passphrase|master key|vault|keychain|get into)\b|"
                           r"解锁|口令|凭据|凭证|账号|帐号|用户名",
                           re.I)
_SIGN_IN_WORDS = re.compile(r"\b(?:log\s?-?in|sign\s?-?in)\b|登录|登陆", re.I)


# what a password "is" when the sentence describes it rather than gives it
_DESCRIBED = frozenset("""weak strong long short secure safe correct wrong invalid incorrect old new same different
simple complicated complex hard easy fine okay good great bad terrible awful useless unique random private personal
secret known unknown mine yours ours theirs here there below above attached inside somewhere gone broken locked
required needed missing empty blank case sensitive insecure unsafe obvious memorable strange weird funny silly stupid
dumb lame cute nice cool sure true false also still just really very quite too not none null nothing something
anything everything same""".split())


_ABOUT_PASSWORDS = re.compile(r"\b(?:manager|app|vault|policy|hint|reset|rules?|requirements?|strength|length|"
                              r"generator|field|prompt|screen)\b", re.I)


def _plain_word_given(value: str, rest: str, *, zh: bool) -> bool:
    """"My password is sunshine", "我的密码是 sunshine": a plain word given as the value —
    one word ending the clause, not one that describes it ("is weak", "is expired")."""
    word = value.strip("\"'“”‘’.,;:!?。，；：！？")
    if not (word.isascii() and word.isalpha() and len(word) >= 4) or word.lower() in _DESCRIBED:
        return False
    if zh:
        return True
    if word.lower().endswith(("ed", "ing", "ly")):
        return False
    return bool(re.match(r"\s*(?:$|[.,;:!?。，！]|\s*(?:and|but|so|please|remember|don't|dont|ok)\b)", rest, re.I))


def _password_shaped(token: str, *, cue: str | None) -> bool:
    """``cue``: ``unlock`` or ``sign_in`` when the text speaks of one, else None."""
    token = token.strip("\"'“”‘’()[]{}<>.,;:，。；：")
    if not 6 <= len(token) <= 64 or not _PASSWORD_CHARS.fullmatch(token) or token[0] in "@#" \
            or re.search(r"@[\w-]+\.\w", token):
        return False  # a handle, a hashtag, an address or a piece of code is not a password
    upper, lower = any(c.isupper() for c in token), any(c.islower() for c in token)
    digit, letter = any(c.isdigit() for c in token), any(c.isalpha() for c in token)
    if upper and lower and digit and len(token) >= 8 and any(c in _INSIDE for c in token[:-1]):
        return True
    if cue is None or not (letter and digit):
        return False
    return any(c in _SYMBOLS for c in token) or (cue == "unlock" and upper and lower)


def _shaped_password(t: str) -> bool:
    tokens = [m.group(0) for m in _TOKENS.finditer(t) if len(m.group(0)) >= 6]
    if not tokens:
        return False
    cue = "unlock" if _UNLOCK_WORDS.search(t) else "sign_in" if _SIGN_IN_WORDS.search(t) else None
    return any(_password_shaped(token, cue=cue) for token in tokens)


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
    if _PREFIXED.search(t) or _known_credential(t):
        return "api_key"
    if _LOGIN_PAIR.search(t):
        return "password"
    if _SPACED_PIN.search(t) or _COMBINATION.search(t) or _PARTIAL_PIN.search(t):
        return "password"
    for m in (*_LOGIN_GIVEN.finditer(t), *_LOGIN_PAIR2.finditer(t)):
        value = m.group(1) if m.lastindex else None
        if value is None:
            after = _LOGIN_PAIR2.search(t, m.end() - 1) or _LOGIN_PAIR2.search(t)
            value = after.group(1) if after else None
        if value and _password_like(value):
            return "password"
    if any(_key_shaped(m.group(1)) and not _DATA_KEY.search(t[max(0, m.start() - 24):m.start()])
           for m in _KEY_GIVEN.finditer(t)):
        return "api_key"
    for m in _PASSWORD_GIVEN.finditer(t):
        about = _ABOUT_PASSWORDS.search(m.group(0))  # "my password manager is bitwarden": not the password
        if _password_like(m.group(1)) or (not about and _plain_word_given(m.group(1), t[m.end():], zh=False)):
            return "password"
    if _CODES.search(t):
        return "password" if not re.search(r"passport|护照", t, re.I) else "national_id"
    if _recovery_phrase(t):
        return "recovery_phrase"
    number = _standard_number(t)
    if number:
        return number
    if _split_card(t):
        return "payment_card"
    if _URL_PASSWORD.search(t):
        return "password"
    for m in _PASSWORD.finditer(t):
        # "secret Document" (no "is", no colon) names a thing; "password is Sunflower" gives one
        value, said = m.group(2) or m.group(3) or "", m.group(1) is not None or m.group(3) is not None
        if _password_like(value, said=said) or (said and _plain_word_given(value, t[m.end():], zh=m.group(3) is not None)):
            return "password"
    for m in _CONTEXT_HEX.finditer(t):
        if re.search(r"\d", m.group(1)) and len(set(m.group(1))) >= 8:
            return "token"
    if _WORDED_NUMBER.search(t):
        return "national_id" if re.search(r"身份证|passport|护照|social|ssn|national|社保|医保|驾驶证|licen", t, re.I) else \
            "payment_card" if re.search(r"card|卡|account|账号|账户|routing|iban", t, re.I) else "password"
    if _SSN_WORDED.search(t) or re.search(r"\b(?:ssn|social(?: security)?)\b\D{0,16}\d{3}[ \-]\d{2}[ \-]\d{4}\b", t, re.I):
        return "national_id"
    ids = [u.span() for u in _UUID.finditer(t)]
    for m in _DIGIT_RUN.finditer(t):
        if any(start <= m.start() < end for start, end in ids):
            continue  # a UUID's groups, not a card or an id written in groups
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
    if _shaped_password(t):
        return "password"
    return None
