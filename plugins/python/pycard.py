#!/usr/bin/env python3
"""A listd plugin in plain Python (standard library only): proof that the plugin protocol is
language-neutral. It provides the content type "pycard" (registrations use "plugin:pycard"): the item's
title as text, and its `regDate` (milliseconds since 1970) as a date in the secondary text.

Usage: pycard.py [--socket PATH] [--hang] [--garbage] [--alternate]
  --hang       never answer configure requests (to test deadlines)
  --garbage    answer with a line that is not JSON (to test disconnection)
  --alternate  also provide "pycardCompact", and answer with it every other time (to test the
               content-configuration-replaced warning)
The socket defaults to $LISTD_SOCKET."""
import datetime, json, os, socket, sys


def main():
    args = sys.argv[1:]
    path = os.environ.get("LISTD_SOCKET")
    if "--socket" in args:
        path = args[args.index("--socket") + 1]
    connection = socket.socket(socket.AF_UNIX)
    connection.connect(path)
    stream = connection.makefile("rwb")

    def send(value):
        stream.write(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        stream.flush()

    alternate = "--alternate" in args
    provides = ["pycard", "pycardCompact"] if alternate else ["pycard"]
    send({"cmd": "hello", "role": "plugin", "name": "pycard", "provides": provides, "protocol": 1})
    answered = 0
    for line in stream:
        message = json.loads(line)
        if message.get("event") != "configure":
            continue  # replies to our own commands, and other events
        if "--hang" in args:
            continue
        if "--garbage" in args:
            stream.write(b"this is not json\n")
            stream.flush()
            continue
        answers = []
        for cell in message["cells"]:
            data = cell.get("data") or {}
            content = {"text": str(data.get("title", cell["item"]))}
            if isinstance(data.get("regDate"), (int, float)):
                day = datetime.datetime.fromtimestamp(data["regDate"] / 1000, datetime.timezone.utc)
                content["secondaryText"] = day.strftime("%Y-%m-%d")
            if (cell.get("state") or {}).get("selected"):
                content["text"] = "✓ " + content["text"]
            if alternate and answered % 2 == 1:
                content["type"] = "pycardCompact"
            answered += 1
            answers.append({"cell": cell["cell"], "content": content})
        send({"cmd": "configured", "request": message["request"], "cells": answers})


if __name__ == "__main__":
    main()
