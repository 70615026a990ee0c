#!/usr/bin/env python3
"""The wire check: every request body the test suite's fake model server
received (recorded by crates/testkit into $CHOCK_WIRE_DIR, one JSON file per
request) is validated against the provider's published request types, the
official Python SDKs' TypedDicts (openai, anthropic; pinned in .ci/run).

The TypedDicts are made strict before validation: every TypedDict reachable
from the top-level type gets `extra='forbid'`, so a field the real API does
not define fails here, as does a wrong type or a missing required field.

Usage: wire-check.py DIR     validate every recorded request
       wire-check.py --self-test   show that bad bodies are refused
"""

import json
import os
import sys
import typing

import typing_extensions

import anthropic
import openai
import pydantic
from pydantic import ConfigDict, TypeAdapter

from anthropic.types import message_create_params as a_create
from anthropic.types import message_count_tokens_params as a_count
from openai.types.chat import completion_create_params as o_chat
from openai.types.responses import response_create_params as o_resp


def _is_typeddict(tp):
    return isinstance(tp, type) and typing_extensions.is_typeddict(tp)


def _is_model(tp):
    """A response model, or an alias that is only response models (the
    SDKs' `ContentBlock = Annotated[Union[TextBlock, ...], ...]`)."""
    if isinstance(tp, type):
        return issubclass(tp, pydantic.BaseModel)
    origin = typing_extensions.get_origin(tp)
    args = typing_extensions.get_args(tp)
    if origin is typing_extensions.Annotated or origin is typing.Annotated:
        return _is_model(args[0])
    if origin is typing.Union:
        return all(_is_model(a) for a in args)
    return False


def _params_only(hint):
    """`hint` with the SDK's response models taken out of every union: the
    SDKs accept a response object where a param goes, and a model keeps
    unknown keys, so left in it would let any extra field through."""
    origin = typing_extensions.get_origin(hint)
    args = typing_extensions.get_args(hint)
    if origin is None or not args:
        return hint
    if origin is typing.Union:
        kept = tuple(_params_only(a) for a in args if not _is_model(a))
        if not kept:
            return hint
        return kept[0] if len(kept) == 1 else typing.Union[kept]
    if origin is typing_extensions.Annotated or origin is typing.Annotated:
        return typing_extensions.Annotated[(_params_only(args[0]), *args[1:])]
    if origin is typing_extensions.Literal or origin is typing.Literal:
        return hint
    new = tuple(_params_only(a) for a in args)
    if new == args:
        return hint
    try:
        return origin[new if len(new) > 1 else new[0]]
    except TypeError:
        return hint


def _strict(tp, seen):
    """Marks every TypedDict reachable from `tp` as refusing extra keys, and
    takes response models out of its fields' unions."""
    if id(tp) in seen:
        return
    seen.add(id(tp))
    if _is_typeddict(tp):
        tp.__pydantic_config__ = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
        hints = typing_extensions.get_type_hints(tp, include_extras=True)
        for name, hint in hints.items():
            narrowed = _params_only(hint)
            if narrowed is not hint:
                tp.__annotations__[name] = narrowed
            _strict(narrowed, seen)
        return
    for arg in typing_extensions.get_args(tp):
        _strict(arg, seen)
    origin = typing_extensions.get_origin(tp)
    if origin is not None and origin is not tp:
        _strict(origin, seen)
    value = getattr(tp, "__value__", None)  # PEP 695 aliases
    if value is not None:
        _strict(value, seen)


def drain(value):
    """Validates what pydantic left lazy: an `Iterable[...]` field is
    validated item by item as it is iterated, so every one is iterated."""
    if isinstance(value, pydantic.BaseModel):
        # The SDKs also accept their response models where a param goes,
        # and those keep unknown keys instead of refusing them.
        if value.model_extra:
            raise ValueError(
                f"{type(value).__name__} has fields the API does not define: {sorted(value.model_extra)}"
            )
        for name in type(value).model_fields:
            drain(getattr(value, name))
    elif isinstance(value, dict):
        for item in value.values():
            drain(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            drain(item)
    elif not isinstance(value, (str, bytes)) and hasattr(value, "__next__"):
        for item in value:
            drain(item)


def adapter(tp):
    _strict(tp, set())
    return TypeAdapter(tp)


def adapters():
    return {
        ("anthropic", True): adapter(a_create.MessageCreateParamsStreaming),
        ("anthropic", False): adapter(a_create.MessageCreateParamsNonStreaming),
        ("anthropic_count", None): adapter(a_count.MessageCountTokensParams),
        ("openai", True): adapter(o_chat.CompletionCreateParamsStreaming),
        ("openai", False): adapter(o_chat.CompletionCreateParamsNonStreaming),
        ("openai_responses", True): adapter(o_resp.ResponseCreateParamsStreaming),
        ("openai_responses", False): adapter(o_resp.ResponseCreateParamsNonStreaming),
    }


def which(path):
    """The API a request path belongs to."""
    if path.endswith("/v1/messages/count_tokens"):
        return "anthropic_count"
    if path.endswith("/v1/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/responses"):
        return "openai_responses"
    return None


def check(table, path, body):
    api = which(path)
    if api is None:
        return None
    stream = None if api == "anthropic_count" else bool(body.get("stream", False))
    try:
        drain(table[(api, stream)].validate_python(body))
    except (pydantic.ValidationError, ValueError) as err:
        return f"{api} request refused by the SDK's types:\n{err}"
    return None


def self_test(table):
    good_anthropic = {
        "model": "m",
        "max_tokens": 10,
        "stream": True,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    }
    bad = [
        ("/v1/messages", {**good_anthropic, "frobnicate": 1}),
        ("/v1/messages", {**good_anthropic, "messages": [{"role": "user", "content": [{"type": "text", "text": "x", "cache": 1}]}]}),
        ("/v1/messages", {k: v for k, v in good_anthropic.items() if k != "max_tokens"}),
        ("/v1/chat/completions", {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}], "stream_option": {}}),
        ("/v1/responses", {"model": "m", "stream": True, "input": [{"type": "function_call_output", "call_id": "c", "output": "x", "result": 1}]}),
        ("/v1/responses", {"model": "m", "stream": True, "input": [{"type": "reasoning", "summary": [], "encrypted": "x"}]}),
    ]
    assert check(table, "/v1/messages", good_anthropic) is None, "a good body was refused"
    for path, body in bad:
        if check(table, path, body) is None:
            print(f"wire check self-test: a bad body passed: {path} {json.dumps(body)}")
            return 1
    print(f"wire check self-test: {len(bad)} bad bodies refused (openai {openai.__version__}, anthropic {anthropic.__version__})")
    return 0


def main(argv):
    table = adapters()
    if argv[1:] == ["--self-test"]:
        return self_test(table)
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = argv[1]
    checked, failures = 0, []
    for name in sorted(os.listdir(root)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(root, name)) as f:
            record = json.load(f)
        try:
            body = json.loads(record["body"])
        except json.JSONDecodeError:
            continue  # a test that sends a non-JSON body on purpose
        if record.get("test_input"):
            continue  # a test's own hand-made request, not Chock's
        problem = check(table, record["path"], body)
        if which(record["path"]) is not None:
            checked += 1
        if problem:
            failures.append(f"{name} ({record.get('test', '?')}): {problem}")
    for failure in failures:
        print(failure)
    print(f"wire check: {checked} requests checked against openai {openai.__version__} and anthropic {anthropic.__version__}, {len(failures)} refused")
    if checked == 0:
        print("wire check: no requests were recorded; was CHOCK_WIRE_DIR set for the test run?")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
