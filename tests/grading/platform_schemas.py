"""JSON Schemas of the two platforms' results files, written from their documentation.

Gradescope: "Autograder Specifications" (gradescope-autograders.readthedocs.io, docs/specs.md of
gradescope/autograder_samples): a top-level ``score`` or scores on every test, ``tests`` with ``score``,
``max_score``, ``name``, ``output``, ``visibility`` (visible, hidden, after_due_date, after_published) and
``status`` (passed, failed). PrairieLearn: "External Grading" (docs/externalGrading.md): ``score`` in
[0, 1] when ``gradable`` is true (the default), ``format_errors`` when it is false, ``tests`` with ``name``,
``description``, ``points``, ``max_points``, ``message`` and ``output``, the whole file under 1 MB.
Unknown keys are refused, so that a misspelt one fails here rather than being ignored by the platform.
"""

VISIBILITY = {"enum": ["visible", "hidden", "after_due_date", "after_published"]}
NUMBER = {"type": "number"}
TEXT = {"type": "string"}

GRADESCOPE = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "score": NUMBER, "execution_time": NUMBER, "output": TEXT, "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY, "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["score", "max_score", "name"],
            "properties": {"score": NUMBER, "max_score": NUMBER, "name": TEXT, "number": TEXT, "output": TEXT,
                           "tags": {"type": "array", "items": TEXT}, "visibility": VISIBILITY,
                           "status": {"enum": ["passed", "failed"]}, "extra_data": {"type": "object"}},
        }},
        "leaderboard": {"type": "array"},
    },
    "anyOf": [{"required": ["score"]}, {"required": ["tests"]}],
}

PRAIRIELEARN = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "gradable": {"type": "boolean"}, "score": {"type": "number", "minimum": 0, "maximum": 1},
        "message": TEXT, "output": TEXT, "images": {"type": "array"},
        "format_errors": {"anyOf": [TEXT, {"type": "array", "items": TEXT}]},
        "tests": {"type": "array", "items": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "points", "max_points"],
            "properties": {"name": TEXT, "description": TEXT, "points": NUMBER, "max_points": NUMBER,
                           "message": TEXT, "output": TEXT, "images": {"type": "array"}},
        }},
    },
    "if": {"properties": {"gradable": {"const": False}}, "required": ["gradable"]},
    "then": {"required": ["format_errors"]},
    "else": {"required": ["score"]},
}
MAX_PRAIRIELEARN_BYTES = 2**20
