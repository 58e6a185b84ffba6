import pytest

from archivist import TiktokenCounter, TokenizerUnavailable


def test_cl100k_counts_offline_like_tiktoken():
    c = TiktokenCounter("cl100k_base")
    assert c.count("hello world") == 2
    assert c.count("") == 0
    # special-token text is counted as text, never raises
    assert c.count("<|endoftext|>") > 1


def test_o200k_is_available_too():
    assert TiktokenCounter("o200k_base").count("用户偏好用中文解释技术问题。") > 0


def test_unknown_encoding_is_a_clear_error():
    with pytest.raises(TokenizerUnavailable, match="offline"):
        TiktokenCounter("p50k_base")
