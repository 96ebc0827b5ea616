"""Secrets and identifying numbers: what long-term memory must never keep.

Why a module of its own: the plugin's ``remember`` is the only place that writes what a user says
into storage that outlives the conversation, so the rule that keeps secrets out must be one
function that can be read and tested alone (tests/test_memory_secrets.py lists every kind of text it
refuses and the ordinary facts it must still let through).

The check runs on a *normalised* copy of the whole text (every field that would be stored, joined):
NFKC (full-width letters and digits become ASCII, so ``ｐａｓｓｗｏｒｄ`` is ``password``), invisible
characters removed (zero-width spaces and joiners, soft hyphens, BOMs, variation selectors), every
kind of space made one space, case folded, and separators inside a Chinese word dropped (``密 码``
is ``密码``). Digit groups joined by spaces, dashes, dots, underscores, slashes or commas are read as
one number, so ``6222.0212.3456.7890`` and ``4111\u200b1111…`` are card numbers like ``4111111111111111``.

What is refused (the kind names the reason shown to the user):

* ``password`` — a password, passcode, PIN, 口令 or 暗号, a security-question answer (密保答案,
  ``security answer``) or a wallet's seed phrase (助记词, ``seed phrase``) followed by a value
  (``密码：123456``, ``pwd: hunter2``, ``支付 PIN 是 4821``, ``my password is …``);
* ``code`` — a verification, one-time or authorisation code with its digits (``验证码 384920``), and
  the codes that open something (取件码, 门禁码, ``door code``, ``alarm code``, ``recovery code`` …);
* ``key`` — API keys and tokens by their shape (``sk-…``, ``sk-proj-…``, ``AKIA…``, ``ghp_…``,
  ``github_pat_…``, ``glpat-…``, ``xoxb-…``, ``AIza…``, ``hf_…``, Stripe ``sk_live_…``), JSON web
  tokens, ``Bearer …``, private-key blocks, passwords inside URLs, 密钥/令牌 with a value, a
  credential that says what it opens (登录凭证, 访问凭据, ``login credentials``) with a value, a bare
  凭证/凭据 only with a value of letters and digits (报销凭证 is a receipt), and assignments whose name
  says key, secret, token or password (``API_KEY=…``, ``client_secret: …``);
* ``card`` — a payment card number: 13 to 19 digits that pass the Luhn check, or 12 or more digits
  next to a word for a card (卡号, 银行卡, credit card …), and card security codes (CVV, 安全码);
* ``id`` — a Chinese resident ID number (18 characters whose GB 11643 check character is right and
  whose birth date is a date), or 15/18 digits next to 身份证/证件号/ID number, passport numbers
  next to 护照/passport, and US social security numbers next to SSN.

What is not refused: a mention without a value (``我喜欢研究密码学``, ``习惯用密码管理器``,
``password manager``, ``backup codes are in the safe``, 报销凭证/购物凭证 and 凭证号), phone numbers, dates, prices, postcodes, flight and room numbers, the last
digits of a card (``银行卡尾号 7890``), and long numbers labelled as something else (订单号,
快递单号, 手机, order, tracking …) unless a card word is next to them.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date

SENSITIVE_KINDS = ("password", "code", "key", "card", "id")

# Invisible characters that are not in Unicode's "format" category (Cf is removed wholesale).
_INVISIBLE = frozenset({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, 0x2800})
_CJK = "\u3400-\u9fff\uf900-\ufaff"

# -- passwords, codes and keys said in words: a keyword, then a connector or a value

# A credential (凭证/凭据) is a secret only where the word says what it opens: 登录凭证 is, 报销凭证 (a
# receipt) is not. Unqualified, it counts only with a value that looks like a secret (letters and digits).
_ZH_CREDENTIAL = (r"(?:登录|登陆|访问|身份|认证|鉴权|安全|授权|账号|账户|帐号|帐户|系统|临时|接口|服务器|数据库|云|"
                  r"api|ak|sk)\s*(?:凭证|凭据)")
_ZH_WORDS = {
    "password": r"密码|口令|暗号|密保(?:问题)?的?答案|助记词",
    "code": r"验证码|校验码|动态码|短信码|授权码|提取码|激活码|取件码|解锁码|开门码|门禁码",
    "key": rf"密钥|秘钥|私钥|令牌|{_ZH_CREDENTIAL}",
}
_ZH_BARE_CREDENTIAL = re.compile(r"(?:凭证|凭据)(?![号单类编])\s*(?:[:=]|是|为|為)?\s*"
                                 r"(?=[!-~]*[a-z])(?=[!-~]*[0-9])[!-~]{6,}")
_ZH_CONNECTOR = (r"(?:[:=]|->|(?:is|was|are)(?![a-z])|是|为|為|就是|改成|改为|设为|设置为|设成|换成|都是|用的是|叫|"
                 r"显示|显示为)")
_EN_STRONG = {
    "password": r"password|passwd|passcode|passphrase|pass word|pwd|pin(?: ?code| ?number|码)?",
    "code": (r"otp|one[ -]time (?:code|password|passcode)|verification code|security code|"
             r"auth(?:entication|orization)? code|2fa code|mfa code|login code|sms code"),
}
_EN_WEAK = {
    "key": (r"api[ _-]?key|access[ _-]?key(?: id)?|secret[ _-]?key|private[ _-]?key|client[ _-]?secret|"
            r"secret|(?:access|refresh|auth|api|bearer|session) ?token|token|credentials?"),
    "code": (r"(?:door|gate|alarm|garage|lock|unlock|access|entry|recovery|backup|pairing|activation|pickup|"
             r"locker|safe|building|wi-?fi) ?codes?"),
    "password": (r"(?:seed|recovery|secret|mnemonic|wallet) ?phrase|mnemonic|"
                 r"(?:security|secret|memorable) (?:question )?(?:answer|word)"),
}
_EN_CONNECTOR = r"(?:[:=]|->|(?:is|was|are)(?![a-z])|是|为)"
_VALUE_WITH_MARK = r"(?=[^\s]*[0-9!@#$%^&*_+=~\-])[!-~]{3,}"

# -- keys and tokens by shape (on case-folded text)

_TOKEN_RE = re.compile(
    r"(?<![a-z0-9])(?:"
    r"sk-(?:[a-z0-9]+-)*[a-z0-9_]{16,}"                                   # OpenAI / Anthropic style
    r"|(?:akia|asia|agpa|aida|aroa|aipa|anpa|anva|apka|abia|acca)[a-z0-9]{16}(?![a-z0-9])"  # AWS
    r"|gh[pousr]_[a-z0-9]{20,}|github_pat_[a-z0-9_]{20,}"                 # GitHub
    r"|glpat-[a-z0-9_-]{20,}|xox[abposr]-[a-z0-9-]{10,}|aiza[a-z0-9_-]{30,}|hf_[a-z0-9]{30,}"
    r"|(?:sk|rk)_(?:live|test)_[a-z0-9]{16,}"                             # Stripe
    r"|eyj[a-z0-9_-]{8,}\.[a-z0-9_-]{8,}\.[a-z0-9_-]{8,}"                 # JSON web token
    r")"
    r"|-----begin [a-z0-9 ]*private key-----"
    r"|(?<![a-z])bearer\s+[a-z0-9._~+/=-]{6,}"
    r"|authorization\s*[:=]\s*basic\s+[a-z0-9+/=]{8,}"
    r"|[a-z][a-z0-9+.-]*://[^\s/@:]+:[^\s/@]+@"                          # user:password@host
)
_ASSIGN_RE = re.compile(r"(?<![a-z0-9])([a-z0-9]+(?:[_.-][a-z0-9]+)*)\s*[:=]\s*[\"']?([!-~]{4,})")
_NAME_PARTS = frozenset({
    "key", "apikey", "accesskey", "secretkey", "privatekey", "passkey", "masterkey", "signingkey",
    "pin", "pass", "auth", "authorization", "bearer", "credential", "credentials", "sessionid",
    "cookie", "sig", "signature",
})
_NAME_ENDINGS = ("token", "secret", "password", "passwd", "pwd")

# -- numbers

_DIGIT_RUN_RE = re.compile(r"\d(?:[ \-._·•/,|]{0,4}\d)*(?:[ \-._·•/,|]{0,4}x(?![a-z]))?")
_CARD_WORDS = re.compile(
    r"卡号|银行卡|信用卡|储蓄卡|借记卡|银联|工资卡|卡片|visa|master ?card|amex|credit card|debit card|card")
_ID_WORDS = re.compile(r"身份证|身份号|证件号|居民身份|id ?(?:number|card|no)|identity")
_OTHER_NUMBER_WORDS = re.compile(
    r"订单|单号|运单|快递|物流|发票|流水|交易号|手机|电话|座机|会员号|工号|学号|"
    r"order|tracking|invoice|ticket|phone|mobile|tel")
_PHONE_RE = re.compile(r"(?:0{0,2}86)?1[3-9]\d{9}")
_PASSPORT_RE = re.compile(r"(?:护照|passport)[^0-9a-z]{0,8}[a-z]{1,2}\d{7,8}(?![0-9])")
_SSN_RE = re.compile(r"(?:ssn|social security)[^0-9]{0,8}\d{3}-?\d{2}-?\d{4}(?![0-9])")
_CVV_RE = re.compile(r"(?<![a-z])(?:cvv2?|cvc2?|安全码)\s*(?:[:=是为]\s*)?\d{3,4}(?![0-9])")
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def sensitive_normalise(text: str) -> str:
    """The form every rule reads: NFKC, invisible characters out, one kind of space, case folded."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFKC", text):
        code = ord(ch)
        category = unicodedata.category(ch)
        if (category == "Cf" or code in _INVISIBLE or 0xFE00 <= code <= 0xFE0F
                or 0xE0100 <= code <= 0xE01EF):
            continue
        if category in ("Zs", "Zl", "Zp", "Cc"):
            out.append(" ")
        elif ch.isdecimal():
            out.append(str(unicodedata.decimal(ch)))  # Arabic-Indic and other digits read as 0-9
        else:
            out.append(ch)
    folded = " ".join("".join(out).casefold().split())
    return re.sub(rf"(?<=[{_CJK}])[\s·・\-_.*]+(?=[{_CJK}])", "", folded)


def sensitive_luhn(digits: str) -> bool:
    """The Luhn checksum every payment card number satisfies (ISO/IEC 7812)."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def sensitive_cn_id(chars: str) -> bool:
    """A Chinese resident ID number: region, birth date, sequence, GB 11643 (ISO 7064 MOD 11-2) check."""
    if len(chars) != 18 or not chars[:17].isdigit() or chars[17] not in "0123456789x":
        return False
    if chars[0] not in "12345678":
        return False
    try:
        born = date(int(chars[6:10]), int(chars[10:12]), int(chars[12:14]))
    except ValueError:
        return False
    if not 1900 <= born.year <= 2100:
        return False
    check = "10x98765432"[sum(int(c) * w for c, w in zip(chars[:17], _ID_WEIGHTS)) % 11]
    return chars[17] == check


def _said_in_words(text: str) -> str:
    """A secret said in words: keyword + connector + anything, or keyword + a value with a digit/mark."""
    for kind, words in _ZH_WORDS.items():
        if re.search(rf"(?:{words})\s*(?:{_ZH_CONNECTOR}\s*\S|{_VALUE_WITH_MARK}|[a-z]{{3,}}\d*)", text):
            return kind
    for kind, words in _EN_STRONG.items():
        if re.search(rf"(?<![a-z])(?:{words})(?![a-z])\s*(?:{_EN_CONNECTOR}\s*\S"
                     rf"|{_VALUE_WITH_MARK})", text):
            return kind
    for kind, words in _EN_WEAK.items():
        if re.search(rf"(?<![a-z])(?:{words})(?![a-z])\s*(?:(?:[:=]|->)\s*[!-~]{{4,}}"
                     rf"|{_EN_CONNECTOR}\s*{_VALUE_WITH_MARK}|{_VALUE_WITH_MARK})", text):
            return kind
    if _ZH_BARE_CREDENTIAL.search(text):
        return "key"
    return ""


def _named_assignment(text: str) -> bool:
    """``NAME=value`` / ``name: value`` where the name says key, secret, token or password."""
    for match in _ASSIGN_RE.finditer(text):
        value = match.group(2)
        if len(value) < 8 and not re.search(r"[0-9!@#$%^&*_+=~\-]", value):
            continue  # "auth: google" names a method, not a secret
        for part in re.split(r"[_.-]", match.group(1)):
            if part in _NAME_PARTS or part.endswith(_NAME_ENDINGS):
                return True
    return False


def _card_or_id_number(text: str) -> str:
    """A card or ID number among the digit runs of ``text`` ("" when none)."""
    for match in _DIGIT_RUN_RE.finditer(text):
        run = re.sub(r"[^0-9x]", "", match.group(0))
        digits = run.rstrip("x")
        before = text[max(0, match.start() - 12):match.start()]
        carded = bool(_CARD_WORDS.search(before))
        if carded and len(digits) >= 12:
            return "card"
        if _ID_WORDS.search(before) and (len(run) in (15, 18) or len(digits) in (15, 17, 18)):
            return "id"
        if _OTHER_NUMBER_WORDS.search(before) or _PHONE_RE.fullmatch(digits):
            continue
        if run == digits and 13 <= len(digits) <= 19 and sensitive_luhn(digits):
            return "card"
        if sensitive_cn_id(run):
            return "id"
    if _CVV_RE.search(text):
        return "card"
    if _PASSPORT_RE.search(text) or _SSN_RE.search(text):
        return "id"
    return ""


def sensitive_kind(*texts: str) -> str:
    """The kind of secret in ``texts`` (one of :data:`SENSITIVE_KINDS`), or "" when there is none.

    All texts are checked together, so a secret split across fields (subject ``密码``, text
    ``123456``) is still one secret. Never raises on any string.
    """
    text = sensitive_normalise(" ".join(t for t in texts if isinstance(t, str)))
    if not text:
        return ""
    if _TOKEN_RE.search(text):
        return "key"
    return _said_in_words(text) or ("key" if _named_assignment(text) else "") or _card_or_id_number(text)
