import math

import pytest
from conftest import candidate, turn

from archivist import InvalidCandidate, Status, WriteRejected
from archivist.pipeline.governance import GovernanceConfig, parse_candidate


def rejected_codes(report):
    return [reason.code for _, reason in report.rejected]


def test_accepts_user_durable_descriptive_with_evidence(alice):
    report = alice.apply([candidate()], turn())
    assert [f.content for f in report.saved] == ["用户偏好用中文解释技术问题。"]
    fact = report.saved[0]
    assert fact.status is Status.COMMITTED
    assert fact.provenance.message_id == "u1"
    assert fact.provenance.evidence_text == "平时请用中文解释技术问题"
    assert alice.audit()[0].code == "accepted"


@pytest.mark.parametrize(
    "over, code",
    [
        ({"scope": "thread"}, "scope_thread"),
        ({"scope": "project"}, "scope_project"),
        ({"durability": "temporary"}, "temporary"),
        ({"authority": "transactional"}, "transactional"),
        ({"confidence": 0.69}, "low_confidence"),
        ({"evidence_message_id": "a1", "evidence_text": "我会用中文解释"}, "evidence_assistant"),
        ({"evidence_message_id": "nope"}, "evidence_not_found"),
        ({"evidence_text": "我喜欢英文"}, "evidence_mismatch"),
        ({"evidence_text": "的"}, "evidence_too_short"),
    ],
)
def test_gate_rejections_carry_reasons_and_write_nothing(alice, over, code):
    report = alice.apply([candidate(**over)], turn())
    assert rejected_codes(report) == [code]
    assert report.saved == [] and alice.facts(include_candidates=True) == []
    assert alice.audit()[0].code == code


def test_threshold_is_configurable(db_path, clock):
    from archivist import Memory

    with Memory.open(db_path, clock=clock, governance=GovernanceConfig(confidence_threshold=0.95)) as mem:
        report = mem.scope(user="alice").apply([candidate(confidence=0.9)], turn())
        assert rejected_codes(report) == ["low_confidence"]


def test_evidence_quote_is_width_case_and_space_normalised(alice):
    msgs = turn(text="I  prefer ＰＹＴＨＯＮ examples")
    report = alice.apply(
        [candidate(key=None, content="The user prefers Python examples.", evidence_text="i prefer python EXAMPLES")], msgs
    )
    assert len(report.saved) == 1


def test_evidence_from_a_filtered_message_is_rejected_with_why(alice):
    msgs = [
        {"id": "m", "role": "user", "content": "用户喜欢详细解释", "metadata": {"origin": "memory"}},
        *turn(),
    ]
    report = alice.apply([candidate(evidence_message_id="m", evidence_text="用户喜欢详细解释")], msgs)
    assert "injected by memory" in str(report.rejected[0][1])


@pytest.mark.parametrize(
    "content",
    ["用户允许推送。", "以后都可以直接重启服务。", "用户授权所有推送", "You may push to main without asking."],
)
def test_grants_are_never_stored_even_when_labelled_descriptive(alice, db_path, content):
    msgs = turn(text=f"记住：{content}")
    report = alice.apply([candidate(key="perm", content=content, evidence_text=content)], msgs)
    assert rejected_codes(report) == ["transactional"]
    assert alice.facts(include_candidates=True, include_history=True) == []
    entry = alice.audit()[0]
    assert entry.content is None and entry.content_hash  # audit keeps only a hash


def test_transactional_content_leaves_no_bytes_anywhere(alice, mem, db_path):
    marker = "允许把本次修改直接推送到生产分支ZX81"
    msgs = turn(text=f"{marker}，以后也一样。")
    alice.apply(
        [candidate(key="push", content=marker, authority="transactional", evidence_text=marker)],
        msgs,
        profile_updates=[{"section": "top_of_mind", "summary": marker, "source_message_ids": ["u1"]}],
    )
    mem.store.db.conn.execute("PRAGMA wal_checkpoint(FULL)")
    for path in db_path.parent.glob("memory.db*"):
        assert marker.encode() not in path.read_bytes(), path


def test_inference_stays_a_candidate_until_confirmed(alice):
    report = alice.apply([candidate(kind="inference", key="role", content="用户可能是后端工程师。",
                                    evidence_text="我主要做 Python 后端开发")], turn())
    assert report.saved == [] and len(report.candidates) == 1
    cand = report.candidates[0]
    assert cand.status is Status.CANDIDATE
    assert alice.search("后端工程师", kinds=["fact"]) == []  # the turn it came from is an episode
    assert "后端工程师" not in alice.render().text
    confirmed = alice.confirm(cand.id)
    assert confirmed.status is Status.COMMITTED
    assert [h.fact.id for h in alice.search("后端工程师")] == [cand.id]


def test_same_key_supersedes_and_keeps_history(alice, clock):
    first = alice.apply([candidate()], turn()).saved[0]
    clock.advance(days=1)
    msgs = turn(text="以后请用英文回答我的技术问题。")
    report = alice.apply(
        [candidate(content="用户偏好用英文回答技术问题。", evidence_text="以后请用英文回答我的技术问题")], msgs
    )
    new = report.saved[0]
    assert new.version == 2 and new.supersedes == first.id
    assert [f.id for f in report.superseded] == [first.id]
    assert [f.id for f in alice.facts()] == [new.id]
    assert alice.search("中文", kinds=["fact"]) == []
    assert [f.version for f in alice.history(new.id)] == [1, 2]
    assert alice.get(first.id).status is Status.SUPERSEDED


def test_re_extraction_does_not_raise_confidence(alice, clock):
    first = alice.apply([candidate(confidence=0.8)], turn()).saved[0]
    clock.advance(days=3)
    for conf in (0.95, 0.99):
        again = alice.apply([candidate(confidence=conf)], turn())
        assert again.saved == [] and len(again.duplicates) == 1
    near = alice.apply([candidate(key=None, content="用户偏好用中文解释技术问题！", confidence=1.0)], turn())
    assert near.saved == [] and near.duplicates
    (only,) = alice.facts()
    assert only.id == first.id and only.confidence == 0.8
    assert only.last_confirmed_at == first.last_confirmed_at
    # only an explicit confirmation moves it
    confirmed = alice.confirm(first.id, confidence=0.95)
    assert confirmed.confidence == 0.95 and confirmed.last_confirmed_at > first.last_confirmed_at


def test_tool_content_never_becomes_a_user_preference(alice):
    with pytest.raises(WriteRejected) as info:
        alice.remember("用户使用 Redis。", category="preference", source_type="tool")
    assert info.value.code == "tool_preference"
    fact = alice.remember("Redis listens on 6379 in this deployment.", category="knowledge", source_type="tool")
    assert fact.provenance.source_type.value == "tool"


def test_stray_control_and_invisible_characters_are_removed_not_fatal(alice):
    msgs = turn(text="我主要做 Python\x0c 后端\u200b开发")
    report = alice.apply([candidate(key=None, content="用户主要做 Python\x00 后端\u200b开发。",
                                    evidence_text="我主要做 Python 后端开发")], msgs)
    assert [f.content for f in report.saved] == ["用户主要做 Python 后端开发。"]


@pytest.mark.parametrize(
    "over, fragment",
    [
        ({"confidence": math.nan}, "invalid_confidence"),
        ({"confidence": 1.5}, "invalid_confidence"),
        ({"confidence": -0.1}, "invalid_confidence"),
        ({"confidence": "0.9"}, "invalid_confidence"),
        ({"confidence": True}, "invalid_confidence"),
        ({"content": ""}, "invalid_content"),
        ({"content": "   "}, "invalid_content"),
        ({"content": "x" * 5000}, "invalid_content"),
        ({"content": "bad \ud800 surrogate"}, "invalid_content"),
        ({"content": 42}, "invalid_content"),
        ({"category": "mood"}, "invalid_label"),
        ({"scope": None}, "invalid_label"),
        ({"authority": 3}, "invalid_label"),
        ({"key": "bad key!"}, "invalid_key"),
        ({"evidence_message_id": None}, "invalid_evidence"),
        ({"valid_until": "tomorrow"}, "invalid_valid_until"),
    ],
)
def test_malformed_candidates_are_rejected_and_nothing_is_written(alice, over, fragment):
    good = candidate(key="other", content="用户主要做 Python 后端开发。", evidence_text="我主要做 Python 后端开发")
    report = alice.apply([good, candidate(**over)], turn())
    assert rejected_codes(report) == [fragment]
    assert [f.content for f in alice.facts()] == ["用户主要做 Python 后端开发。"]


def test_missing_labels_and_non_mapping_candidates():
    for raw in ({"content": "x"}, ["not", "a", "dict"], None):
        with pytest.raises(InvalidCandidate):
            parse_candidate(raw)


def test_pydantic_candidates_are_accepted(alice):
    from pydantic import BaseModel

    class FactCandidate(BaseModel):
        key: str
        content: str
        category: str
        scope: str
        durability: str
        authority: str
        confidence: float
        evidence_message_id: str
        evidence_text: str

    report = alice.apply([FactCandidate(**candidate())], turn())
    assert len(report.saved) == 1


def test_extra_fields_cannot_override_identity_or_status(alice, mem):
    report = alice.apply([candidate(user="bob", tenant="evil", status="committed", id="x")], turn())
    fact = report.saved[0]
    assert fact.identity.user == "alice" and fact.identity.tenant == "default" and fact.id != "x"
    assert mem.scope(user="bob").facts() == []


def test_no_user_message_skips_extraction(alice):
    msgs = [{"id": "u1", "role": "user", "content": "谢谢"}, {"id": "a1", "role": "assistant", "content": "不客气"}]
    report = alice.apply([candidate()], msgs)
    assert report.skipped and report.saved == []


def test_profile_updates_need_user_provenance_and_no_grants(alice):
    msgs = turn()
    report = alice.apply(
        [candidate(content="用户主要从事 Python 后端开发。", key="occupation", category="context",
                   evidence_text="我主要做 Python 后端开发")],
        msgs,
        profile_updates=[
            {"section": "work_context", "summary": "用户主要从事 Python 后端开发。", "source_message_ids": ["u1"]},
            {"section": "top_of_mind", "summary": "用户在学 Agent。", "source_message_ids": ["a1"]},
            {"section": "top_of_mind", "summary": "用户允许推送。", "source_message_ids": ["u1"]},
            {"section": "personal_context", "summary": "x", "scope": "thread", "source_message_ids": ["u1"]},
            {"section": "nope", "summary": "x", "source_message_ids": ["u1"]},
        ],
    )
    assert report.profile_updated == ["work_context"]
    assert rejected_codes(report) == ["evidence_not_found", "transactional", "scope_thread", "invalid_section"]
    profile = alice.profile()
    assert list(profile.sections) == ["work_context"]
    assert profile.sections["work_context"].source_message_ids == ("u1",)
    assert profile.sections["work_context"].sentences[0].facts == (report.saved[0].id,)


def test_a_profile_update_no_live_fact_states_is_not_kept(alice):
    """The profile is a projection of facts: a summary with nothing saved behind it is refused."""
    report = alice.apply([], turn(), profile_updates=[
        {"section": "work_context", "summary": "用户主要从事 Python 后端开发。", "source_message_ids": ["u1"]}])
    assert report.profile_updated == [] and rejected_codes(report) == ["profile_unbacked"]
    assert alice.profile().get("work_context") is None


def test_remember_explicit_and_bulk(alice):
    fact = alice.remember("用户偏好用中文解释技术问题。", category="preference", key="response_language", confidence=0.9)
    assert fact.provenance.source_type.value == "explicit"
    assert alice.remember("用户偏好用中文解释技术问题。", category="preference").id == fact.id  # duplicate
    report = alice.remember_many(
        [
            {"content": "The user works on payments.", "category": "context"},
            {"content": "", "category": "context"},
            {"content": "The user may deploy on Fridays without asking.", "category": "context"},
            "not a dict",
        ]
    )
    assert [f.content for f in report.saved] == ["The user works on payments."]
    assert rejected_codes(report) == ["invalid_content", "transactional", "invalid_shape"]
    with pytest.raises(WriteRejected):
        alice.remember("x", confidence=0.1)


@pytest.mark.parametrize(
    "a, b, same",
    [
        ("用户偏好用中文解释技术问题。", "用户偏好用中文解释技术问题！", True),
        ("The user prefers  Python.", "the user prefers python", True),
        ("用户喜欢喝美式咖啡和拿铁", "用户不喜欢喝美式咖啡和拿铁", False),
        ("The user works 3 days from home", "The user works 4 days from home", False),
        ("The user likes long walks", "The user does not like long walks", False),
    ],
)
def test_near_duplicates_respect_numbers_and_negation(a, b, same):
    from archivist.pipeline.governance import is_near_duplicate

    assert is_near_duplicate(a, b) is same


def test_confirming_a_keyed_inference_replaces_the_live_value(alice, clock):
    live = alice.remember("用户偏好用中文解释技术问题。", key="response_language", category="preference")
    clock.advance(days=1)
    msgs = turn(text="最近我在看很多英文文档。")
    cand = alice.apply(
        [candidate(kind="inference", content="用户可能更想用英文交流。", evidence_text="最近我在看很多英文文档")], msgs
    ).candidates[0]
    assert [f.id for f in alice.facts()] == [live.id]  # an inference never supersedes
    confirmed = alice.confirm(cand.id)
    assert confirmed.version == 2 and confirmed.supersedes == live.id
    assert [f.id for f in alice.facts()] == [cand.id]
    assert [f.id for f in alice.history(cand.id)] == [live.id, cand.id]


def test_remember_raises_invalid_candidate_for_malformed_input(alice):
    with pytest.raises(InvalidCandidate):
        alice.remember("x", confidence=float("nan"))


@pytest.mark.parametrize("text, secret", [
    ("The user's credit card number is 4111 1111 1111 1111.", True),  # a test number: fails the distinct-digit check
    ("用户的身份证号是 110101199003071234。", True),  # a check digit that does not validate
    ("my passport number is E12345678", True),
    ("我的银行卡号是6222021234567890123", True),
    ("the door code is 4821", True),
    ("我家门禁密码是 0815", True),
    ("my card number is on the back of the card", False),
    ("my account is 3 years old", False),
    ("The user's locker number is 4711.", False),
    ("I have 2 cards and 3 accounts", False),
])
def test_numbers_named_as_identifiers_or_codes_are_secrets(text, secret):
    from archivist.pipeline.secrets import find_secret

    assert (find_secret(text) is not None) is secret


def test_record_tags_that_happen_to_pass_the_iban_check_are_not_bank_accounts():
    """Letters and digits pass the IBAN check digits one time in 97: only a country's
    IBAN length and layout make them an account number."""
    from archivist.pipeline.secrets import find_secret

    tags = [t for i in range(2_000) for t in (f"Record {i} is tagged zq{i:06d}x in the archive.",
                                             f"Alice note {i} zq{i:06d}x about the garden")]
    assert [t for t in tags if find_secret(t)] == []
    # a checksum and an order number that pass the check digits, and a code too short
    for text in ("de41ae9d2d4762a1a927b6c6d8f71b13", "Order GB59419324455933628639 shipped.", "Code DE355260181590."):
        assert find_secret(text) is None, text


def test_an_iban_is_a_bank_account_however_it_is_written_and_whatever_follows_it():
    from stdnum.iso7064 import mod_97_10

    from archivist.pipeline.secrets import find_secret

    rib = "300060000112345678901" + "00"  # a French account whose own key is wrong: the IBAN's check digits hold
    wrong_key = "FR" + mod_97_10.calc_check_digits(rib + "FR") + rib
    for text in ("The user's IBAN is DE89370400440532013000 at Commerzbank.",
                 "The user's salary goes to GB29NWBK60161331926819 each month.",
                 "Account DE89-3704-0044-0532-0130-00 is mine.", "用户的IBAN是DE89370400440532013000。",
                 "Pay BE68.5390.0754.7034 now.", "DE89/3704/0044/0532/0130/00", "DE 89 3704 0044 0532 0130 00",
                 "DE 89 37 04 00 44 05 32 01 30 00", "account DE89 3704 0044\n0532 0130 00 ok",
                 "acct_DE89370400440532013000_main", "he said to send it to de89 3704 0044 0532 0130 00 tomorrow",
                 "Mon IBAN : FR76 3000 6000 0112 3456 7890 189.", f"Mein Konto: {wrong_key}, danke."):
        assert find_secret(text) == "bank_account", text


@pytest.mark.parametrize("text, kind", [
    ("The API key for my weather app is 7f3e2a91c04b58d6.", "api_key"),  # a new user's first try
    ("The api key of the staging server is 7f3e2a91c04b58d6", "api_key"),
    ("The token for the CI runner is 9b1c44e0aa72f3d1.", "api_key"),
    ("The access token for GitHub: 3c9e1f0a77b24d85", "api_key"),
    ("The client secret for the Slack bot is Xq7rT2mK9vLp4wZs.", "api_key"),
    # found by a red team that never saw the rule
    ("The API key for my weather app is now 7f3e2a91c04b58d6.", "api_key"),
    ("The API key for my weather app: 7f3e-2a91-c04b-58d6", "api_key"),
    ("The API key for my weather app is 7f3e_2a91_c04b_58d6", "api_key"),
    ("天气应用的 API key 是 7f3e2a91c04b58d6", "api_key"),
    ("Slack机器人的client secret是a8F3kL0pQ9zX2mN", "api_key"),
    ("The webhook secret for GitHub is whsec9f8e7d6c5b4a", "api_key"),
    ("The key for my weather app is 7f3e2a91c04b58d6.", "api_key"),
    ("The API key for my weather app is «7f3e2a91c04b58d6».", "api_key"),
    ("The fix for the token leak was 3f9a2c1b7e4d.", None),
    ("The commit for the token refactor is 3f9a2c1b7e4d", None),
    ("My access token expired; the request id was 7c9e6679a4b3.", None),
    ("My API key stopped working; the support ticket is CS20240815A.", None),
    ("The token for my order is ORD20240815X.", None),
    ("I used 1200 tokens; the run id was run_4f9a2c1b7e.", None),
    ("The app secret rotation job ID is job8c2f1e7a3b.", None),
    ("Token: the ticket number is INC0012345678", None),
    ("The model for the token test is gpt-4o-2024-08-06.", None),
    ("The key for the S3 object is reports2024q3final.csv", None),  # a third red team's: keys of data
    ("The Redis key for user profiles is profile2024v3x", None),
    ("The primary key for that row is 8f14e45fceea167a", None),
    ("The API key label is weatherAppKey2024", None),
    ("The token for the Docker image tag is release2024a7", None),
    ("The token endpoint is login.microsoftonline.com/contoso2024/oauth2/token", None),
    ("The api key name is production-key-2024.", None),  # a key's name: no run mixes letters and digits
    ("The token count is 12000.", None),
    ("My API key expires on 2027-01-01.", None),
    ("The API key for the maps service is stored in Vault.", None),
    ("The token limit is gpt4o-128k.", None),
    ("API keys are rotated every 90 days.", None),
])
def test_a_credential_given_by_its_name_with_what_it_is_for_is_a_secret(text, kind):
    from archivist.pipeline.secrets import find_secret

    assert find_secret(text) == kind


def test_a_named_api_key_is_refused_on_the_write_path_and_never_kept_as_said(tmp_path):
    from archivist import Memory
    from archivist.errors import WriteRejected

    mem = Memory.open(tmp_path / "m.db")
    s = mem.scope(user="alice")
    with pytest.raises(WriteRejected, match="secret"):
        s.remember("The API key for my weather app is 7f3e2a91c04b58d6.")
    s.learn([{"id": "u1", "role": "user",
              "content": "The API key for my weather app is 7f3e2a91c04b58d6. Can you check why it fails?"}],
            thread_id="t1")
    shown = s.context("Why does my weather app fail?", budget=2000).to_messages()
    assert "7f3e2a91c04b58d6" not in str(shown) and "weather" in str(shown)  # the turn is kept, the key is not
    assert all("7f3e2a91c04b58d6" not in f.content for f in s.facts(include_candidates=True))
    mem.close()


@pytest.mark.parametrize("text", ["Writer 3 write 2: alice noted c28039246824.",
                                  "Writer 3 write 237: alice noted 63460583094c.",
                                  "build f96306206574 passed"])
def test_digits_glued_to_letters_in_an_identifier_are_no_national_id(text):
    """A hex identifier whose digits pass a national id's check digits (one in thousands of
    random ones) is an identifier; the same digits written on their own still count."""
    from archivist.pipeline.secrets import find_secret

    assert find_secret(text) is None
    digits = "".join(c for c in max(text.split(), key=lambda w: sum(c.isdigit() for c in w)) if c.isdigit())
    assert find_secret(f"My TC kimlik no is {digits}.") == "national_id"


@pytest.mark.parametrize("text", ["Note 50780037-4116-4461-879e-3490878cc149 saved.",
                                  "Note 42453414-0047-4305-a925-fd4c59e1b490 saved."])
def test_a_uuid_whose_digit_groups_pass_the_luhn_check_is_no_payment_card(text):
    from archivist.pipeline.secrets import find_secret

    assert find_secret(text) is None


def test_a_card_written_in_groups_is_still_a_card():
    from archivist.pipeline.secrets import find_secret

    assert find_secret("Card 5078 0037 4116 4461 expires soon") == "payment_card"


@pytest.mark.parametrize("text", ["NIR185057800608491", "RRN850101-1234566", "TC10000000146"])
def test_a_national_id_after_its_own_letters_is_still_one(text):
    from archivist.pipeline.secrets import find_secret

    assert find_secret(text) == "national_id"
