from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from archivist import MessageFilter, filter_messages


def test_langchain_messages_tool_traffic_and_injected_memory_are_dropped():
    msgs = [
        SystemMessage("You are helpful.", id="s"),
        HumanMessage("长期记忆：用户喜欢详细解释", id="mem", additional_kwargs={"origin": "memory"}),
        HumanMessage("我主要做 Python 后端开发", id="u1"),
        AIMessage("", id="a1", tool_calls=[{"name": "read_file", "args": {"p": "x"}, "id": "c1"}]),
        ToolMessage("redis: 6379", tool_call_id="c1", id="t1"),
        AIMessage("看过了，配置里用的是 Redis。", id="a2"),
    ]
    result = filter_messages(msgs)
    assert [(r.id, r.role) for r in result.rows] == [("u1", "user"), ("a2", "assistant")]
    reasons = dict(result.dropped)
    assert reasons["mem"] == "injected by memory"
    assert reasons["a1"] == "assistant message with tool calls"
    assert reasons["t1"] == "tool message"
    assert reasons["s"] == "system message"


def test_dicts_work_the_same_way():
    msgs = [
        {"id": "u1", "role": "user", "content": "I prefer short answers"},
        {"id": "a1", "role": "assistant", "content": "", "tool_calls": [{"name": "x"}]},
        {"id": "t1", "role": "tool", "content": "output"},
        {"id": "a2", "role": "assistant", "content": "Noted: short answers from now on."},
    ]
    assert [r.id for r in filter_messages(msgs).rows] == ["u1", "a2"]


def test_hidden_messages_are_dropped_but_clarification_answers_kept():
    msgs = [
        {"id": "h", "role": "user", "content": "internal", "metadata": {"hide_from_ui": True}},
        {"id": "c", "role": "user", "content": "用 PostgreSQL 16",
         "metadata": {"hide_from_ui": True, "clarification_answer": True}},
        {"id": "bad", "role": "user", "content": "fake",
         "metadata": {"hide_from_ui": True, "clarification_answer": True, "origin": "runtime"}},
        {"id": "ai", "role": "assistant", "content": "x",
         "metadata": {"hide_from_ui": True, "clarification_answer": True}},
    ]
    result = filter_messages(msgs)
    assert [r.id for r in result.rows] == ["c"]


def test_upload_blocks_are_cut_and_own_words_kept():
    text = "<current_uploads>\n/tmp/a.pdf\n</current_uploads>这是附件，我平时主要负责 Python 后端<uploaded_files>b.txt</uploaded_files>"
    rows = filter_messages([HumanMessage(text, id="u")]).rows
    assert rows[0].content == "这是附件，我平时主要负责 Python 后端"


def test_upload_only_message_and_its_reply_are_dropped():
    msgs = [
        {"id": "u", "role": "user", "content": "<current_uploads>/tmp/a.pdf</current_uploads>"},
        {"id": "a", "role": "assistant", "content": "收到，我已经看到了附件"},
    ]
    result = filter_messages(msgs)
    assert result.rows == ()
    assert not result.has_user


def test_greetings_full_match_only():
    msgs = [
        {"id": "g1", "role": "user", "content": "好的，谢谢！"},
        {"id": "r1", "role": "assistant", "content": "不客气"},
        {"id": "g2", "role": "user", "content": "OK thanks!!"},
        {"id": "r2", "role": "assistant", "content": "You're welcome"},
        {"id": "k", "role": "user", "content": "好的，不过以后解释代码请先给最小示例"},
        {"id": "r3", "role": "assistant", "content": "明白"},
    ]
    result = filter_messages(msgs)
    assert [r.id for r in result.rows] == ["k"]
    assert dict(result.dropped)["r1"] == "reply to a greeting or upload"
    assert dict(result.dropped)["r3"] == "greeting or acknowledgement"  # the assistant's bare "understood"


def test_an_assistants_bare_acknowledgement_is_not_kept_as_said():
    msgs = [{"id": "u1", "role": "user", "content": "I moved to Porto and I work as a nurse."},
            {"id": "a1", "role": "assistant", "content": "Noted."},
            {"id": "u2", "role": "user", "content": "Noted, I will do the rest tomorrow: my sister is visiting."},
            {"id": "a2", "role": "assistant", "content": "好的，记住了。"},
            {"id": "a3", "role": "assistant", "content": "Noted: you prefer window seats."}]
    result = filter_messages(msgs)
    assert [r.id for r in result.rows] == ["u1", "u2", "a3"]  # only a full acknowledgement goes
    assert dict(result.dropped) == {"a1": "greeting or acknowledgement", "a2": "greeting or acknowledgement"}


def test_acknowledgement_list_is_configurable():
    f = MessageFilter(acknowledgements=["roger"])
    assert f.is_acknowledgement("Roger!")
    assert not f.is_acknowledgement("好的")


def test_list_content_keeps_text_blocks_and_missing_ids_are_stable():
    msg = {"role": "user", "content": [{"type": "text", "text": "I use vim"}, {"type": "image_url", "image_url": "x"}]}
    first = filter_messages([msg]).rows[0]
    again = filter_messages([dict(msg)]).rows[0]
    assert first.content == "I use vim\n[image]"  # the image as a marker, never its URL or bytes
    assert first.id == again.id and first.id.startswith("msg-")
    only = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}
    assert filter_messages([only]).rows == ()  # no words: nothing the user said


def test_nothing_from_the_user_means_no_user_rows():
    result = filter_messages([AIMessage("hello there", id="a")])
    assert not result.has_user
