"""The secret detector compiles a pattern only for a text holding one of its trigger literals:
that is only safe while every match of a pattern contains one of them."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_custodian.base import secrets
from memory_custodian.base.secret_rules import RULES

TRIGGERS = {kind: triggers for kind, _source, triggers in RULES}

FRAGMENTS = ["password", "PASSWORD", "pa\u017f\u017fword", "Secret", "api_key", "ap\u0131_key", ":", "=", " ", "\n",
             "'", '"', "hunter2x", "AKIA", "ASIA", "sk-", "sk-ant-", "proj-", "eyJ", "ghp_", "github_pat_", "gl",
             "pat-", "xox", "b-", "://", "@", "ABCDEFGHIJKLMNOP", "0123456789abcdef", "aws_secret_access_key",
             "AWS_SECRET_KEY", "k_live_", "rk_test_", "AIza", "ya29.", "GOCSPX-", "-----BEGIN ", "RSA ",
             "PRIVATE KEY-----", "https://hooks.slack.com/services/T", "curl", " -u ", "mysql", " -p", "Bearer ", "Basic ",
             "dapi", "hvs.", "SG.", "npm_", "hf_", "sig=", "AccountKey=", "Q~", ":AA", "-us1", "key-", "pat", "sl.", "B", "/",
             "Z9" * 10, ".", "_", "-",
             "kind: Secret\n", "data:\n", "  token: ", "Authorization: ", "Token ", "BUNDLE_X__COM=", "<add key=\"Password\" ",
             "value=\"", "sgp_", "ops_eyJ", "MIIEow", "IBAA", "ico-", "SUMO_ACCESS_ID", "A3-", "v1.0-", "s-s4t2ud-", "IR@",
             "https://claude.ai/code/session_", "_KEY = ", "=>", "\\\n"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=14))
def test_every_match_contains_a_trigger(parts):
    text = "".join(parts)
    for kind, source in [(k, s) for k, s, _ in RULES]:
        for m in re.finditer(source, text):
            assert any(t in m.group(0) for t in TRIGGERS[kind]), (kind, text)
    for m in re.finditer(secrets._CONN_SRC, text):
        assert "://" in m.group(0)
    for m in re.finditer(secrets._ASSIGN_SRC, text):
        assert ":" in m.group(0) or "=" in m.group(0)
    for m in re.finditer(secrets._NAMED_KEY_SRC, text):
        assert "_KEY" in m.group(0)


def test_every_kind_has_triggers():
    assert all(triggers for _kind, _source, triggers in RULES)
