#!/usr/bin/env python3
"""Decodes characteristic values with bluetooth-sig's own parsers, for CharacteristicFormatOracleTests.

Each line of stdin: a 16-bit characteristic UUID in hex and a value in hex ("2a6e 0a08").
Each line of stdout, a JSON object: {"value": V} when the parser gives a number, string or
boolean; {"special": "why"} when it reports a special value ("value is not known");
{"error": "ExceptionName"} when it cannot parse the bytes; {"other": "TypeName"} when it
gives a structure (not compared).
"""
import json
import logging
import sys

logging.disable(logging.CRITICAL)

from bluetooth_sig import BluetoothSIGTranslator  # noqa: E402

translator = BluetoothSIGTranslator()
for line in sys.stdin:
    uuid, _, value = line.strip().partition(" ")
    try:
        result = translator.parse_characteristic(uuid.upper(), bytes.fromhex(value))
    except Exception as error:  # the parsers raise their own exception types
        name = type(error).__name__
        answer = {"special": str(error).rsplit(": ", 1)[-1]} if name == "SpecialValueDetectedError" else {"error": name}
    else:
        if isinstance(result, bool):
            answer = {"value": result}
        elif isinstance(result, (int, float, str)):
            answer = {"value": result if not isinstance(result, int) else int(result)}
        else:
            answer = {"other": type(result).__name__}
    print(json.dumps(answer), flush=True)
