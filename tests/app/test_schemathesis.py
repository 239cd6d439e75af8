"""Property-based run over the OpenAPI schema (schemathesis): no server errors, responses match the schema.

Every operation gets a bounded number of generated requests, valid and invalid ones, sent in-process with
the API key; schemathesis' checks run on each response (no 5xx, status codes, content types and bodies as
documented, auth enforced, invalid data rejected).
"""

from __future__ import annotations

from typing import Any

import schemathesis
from conftest import service_settings
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.config import SchemathesisConfig

from vision.app.api import create_app

API_KEY = "schemathesis-key"
# A schema-valid upload is still refused when its bytes are no image, PDF or video (415), are corrupt (422)
# or exceed a limit (413): the schema cannot say "a readable PNG", so those answers count as acceptance.
CONFIG = SchemathesisConfig.from_dict(
    {
        "checks": {
            "positive_data_acceptance": {
                "expected-statuses": ["2xx", "401", "404", "409", "413", "415", "422"]
            }
        }
    }
)
EXAMPLES = 15  # per operation and mode: 9 operations, 1 or 2 modes, 15 each: about 250 requests, a few seconds


def test_api_conforms_to_its_schema(tmp_path: Any, predictor: Any, one_torch_thread: None) -> None:
    app = create_app(
        service_settings(tmp_path, api_key=API_KEY, limits={"max_bytes": 200_000}), predictor=predictor
    )
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=CONFIG)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) == 9  # probes (3), OCR (1), the document schema (1), jobs (4)
    for operation in operations:
        takes_input = any(len(part) for part in (operation.path_parameters, operation.query, operation.body))
        modes = (
            (GenerationMode.POSITIVE, GenerationMode.NEGATIVE) if takes_input else (GenerationMode.POSITIVE,)
        )
        for mode in modes:

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
                derandomize=True,  # the same bounded sample on every run: failures reproduce
            )
            def check(case: Any) -> None:
                case.call_and_validate(headers={"X-API-Key": API_KEY})

            check()
