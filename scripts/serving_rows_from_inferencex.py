"""Rows of ``src/speedtrap/validation/data/serving_measurements.csv`` read from InferenceX's published
per-configuration results (issue 43: a larger measured table, per serving stack).

**Source.** InferenceX (SemiAnalysis) benchmarks serving stacks every night and publishes every
configuration's result through the API behind its dashboard. A response of that API
(``/api/benchmarks``: the latest run of each GPU × framework × precision × ISL/OSL × concurrency ×
layout) is committed to the dashboard's repository as an end-to-end test fixture,
``packages/app/cypress/fixtures/api/benchmarks.json`` of SemiAnalysisAI/InferenceX-app at commit
528c4146b8f502fcbce8df7870a935a970cbae25 (2026-06-14, "refresh Cypress fixtures", #458; read from
the mirror vngcloud/InferenceX-app). Each record names its GitHub Actions run (``run_url``), the
image, the layout (tensor parallel, expert parallel, DP attention) and the metrics of
``benchmark_serving.py`` (median TPOT and TTFT in seconds, ``tput_per_gpu``: input and output
tok/s per GPU). Licences: InferenceX is Apache-2.0, the dashboard repository GPL-3.0; the rows
take measured figures only, no code.

**Which records.** DeepSeek-R1-0528 (the only model in this response), aggregated serving (prefill
on the decode replica), no speculative decoding (``spec_method`` none: MTP's acceptance on random
prompts is not published), hardware in speedtrap's catalogue (B300 is not). Disaggregated
Dynamo/MoRI records are left out: their worker counts and GPU counts disagree within records
(e.g. one GPU per worker with four GPUs counted), so one replica's layout cannot be read.

**How each figure is read** (as the table's other InferenceX rows): tok/s per user = 1 / median
TPOT; tok/s per GPU = ``tput_per_gpu`` (input and output; ``gpu_counts_input`` true); TTFT = the
median; prompt and output lengths 0.9 × nominal (``random-range-ratio 0.8``: each drawn from
[0.8, 1.0] × nominal); chips of one replica = the decode tensor-parallel degree (the per-GPU
output figures times it give the replica's output, within 10% (most within 5%) of concurrency ×
output tokens / (TTFT + (output − 1) × TPOT); a record whose figures put its replica more than
:data:`LAYOUT_TOLERANCE` off its tensor-parallel degree is left out: its median TPOT and TTFT do
not describe the run its throughput counts); expert parallelism and DP attention as the record
states; KV-cache dtype and per-step token budget from the launch scripts of
SemiAnalysisAI/InferenceX at commit 843c6254ff69b567f772f6a5fd97675af3d04431 (2026-08-21; runs
before it may have used other budgets).

    .venv/bin/python scripts/serving_rows_from_inferencex.py PATH/TO/benchmarks.json

rewrites the table's rows from this source (those whose ``source_url`` is the fixture's) and
leaves every other row as it is.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "src/speedtrap/validation/data/serving_measurements.csv"
FIXTURE_COMMIT = "528c4146b8f502fcbce8df7870a935a970cbae25"
FIXTURE_URL = (
    "https://github.com/SemiAnalysisAI/InferenceX-app/blob/"
    f"{FIXTURE_COMMIT}/packages/app/cypress/fixtures/api/benchmarks.json"
)
SCRIPTS_COMMIT = "843c625"
"""SemiAnalysisAI/InferenceX commit whose launch scripts give the KV dtype and token budgets."""

LAYOUT_TOLERANCE = 0.10
"""Largest relative gap between the GPUs one replica's figures imply and its tensor-parallel degree."""

HARDWARE = {"b200": "b200", "h200": "h200", "mi300x": "mi300x", "mi325x": "mi325x", "mi355x": "mi355x"}
"""InferenceX runner name -> speedtrap catalogue name (B300/GB300 are not catalogued)."""

PRECISION = {
    # (hardware vendor, InferenceX precision) -> weights, experts, compute, expert_compute, checkpoint
    ("nvidia", "fp8"): ("fp8", "", "", "", "deepseek-ai/DeepSeek-R1-0528 (FP8 blocks)"),
    ("amd", "fp8"): ("fp8", "", "", "", "deepseek-ai/DeepSeek-R1-0528 (FP8 blocks)"),
    ("nvidia", "fp4"): (
        "fp8",
        "fp4",
        "fp8",
        "fp4",
        "nvidia/DeepSeek-R1-0528-FP4-V2: NVFP4 experts; the always-read weights taken as 8-bit "
        "(assumed, as the SGLang GB200 row; the checkpoint keeps attention out of NVFP4)",
    ),
    ("amd", "fp4"): (
        "fp8",
        "mxfp4",
        "fp8",
        "fp4",
        "amd/DeepSeek-R1-0528-MXFP4-Preview: MXFP4 experts computed in FP4 (w_mxfp4_a_mxfp4); the "
        "always-read weights taken as 8-bit (assumed)",
    ),
}


def _kv_and_budget(framework: str, hardware: str, precision: str, tp: int, isl: int, osl: int, conc: int):
    """KV dtype, per-step token budget (None: not set) and the launch script they come from."""
    script = f"benchmarks/single_node/fixed_seq_len/dsr1_{precision}_{hardware}"
    if framework == "trt":
        # MAX_NUM_TOKENS=((CONC+ISL+64+63)/64*64), at least 8192; kv_cache_config dtype fp8
        budget = max(8192, (conc + isl + 64 + 63) // 64 * 64)
        return "fp8", budget, f"{script}_trt.sh"
    if framework == "atom":
        return "fp8", None, f"{script}_atom.sh"  # --kv_cache_dtype fp8; no token budget set
    if framework != "sglang":
        raise ValueError(framework)
    if hardware == "h200":
        return "bf16", 32768, f"{script}.sh"  # no --kv-cache-dtype: SGLang's auto (16-bit)
    if hardware == "b200" and precision == "fp8":
        return "fp8", 32768 if tp == 8 else 8192, f"{script}.sh"
    if hardware == "b200":
        return "fp8", 16384, f"{script}.sh"  # without DP attention
    if hardware in ("mi300x", "mi325x"):
        return "fp8", 131072, f"{script}.sh"
    if hardware == "mi355x" and precision == "fp8":
        return "fp8", 196608, f"{script}.sh"
    if hardware == "mi355x":
        return "fp8", 32768 if (isl, osl) == (8192, 1024) and conc > 32 else 196608, f"{script}.sh"
    raise ValueError(hardware)


def _shape(isl: int, osl: int) -> str:
    return f"{isl // 1024}k{osl // 1024}k"


def implied_gpus(row: dict[str, str]) -> float:
    """GPUs one replica occupies by the row's own figures: concurrency × output tokens / (TTFT +
    (output − 1) × TPOT), divided by the output tok/s per GPU."""
    isl, osl, conc = float(row["isl"]), float(row["osl"]), float(row["concurrency"])
    tpot_s = 1.0 / float(row["tok_s_per_user"])
    replica_out = conc * osl / (float(row["ttft_s"]) + (osl - 1.0) * tpot_s)
    return replica_out / (float(row["tok_s_per_gpu"]) * osl / (isl + osl))


def row_of(record: dict[str, Any]) -> dict[str, str] | None:
    """The table row of one InferenceX record, or None when it is not of the kind taken (module
    docstring; the layout check is :func:`implied_gpus`, applied by :func:`main`)."""
    hardware = HARDWARE.get(record["hardware"])
    if record["model"] != "dsr1" or record["disagg"] or record["spec_method"] != "none" or hardware is None:
        return None
    framework, precision = record["framework"], record["precision"]
    tp, ep, dpa = int(record["decode_tp"]), int(record["decode_ep"]), bool(record["decode_dp_attention"])
    isl, osl, conc = int(record["isl"]), int(record["osl"]), int(record["conc"])
    metrics = record["metrics"]
    vendor = "amd" if hardware.startswith("mi") else "nvidia"
    weights, experts, compute, expert_compute, checkpoint = PRECISION[(vendor, precision)]
    kv, budget, script = _kv_and_budget(framework, hardware, precision, tp, isl, osl, conc)
    tpot_ms = 1000.0 * float(metrics["median_tpot"])
    per_user = 1000.0 / tpot_ms
    per_gpu = float(metrics["tput_per_gpu"])
    ttft = float(metrics["median_ttft"])
    mean_in, mean_out = round(0.9 * isl), round(0.9 * osl)
    replica_out = conc * mean_out / (ttft + (mean_out - 1) * tpot_ms / 1000.0)
    output_per_gpu = per_gpu * mean_out / (mean_in + mean_out)
    layout = f"TP{tp}" + (f" EP{ep}" if ep > 1 else "") + (" DP attention" if dpa else "")
    tag = f"tp{tp}" + (f"-ep{ep}" if ep > 1 else "") + ("-dpa" if dpa else "")
    image = record.get("image") or "image not recorded"
    notes = (
        f"InferenceX run {record['run_url']} ({image}); DeepSeek-R1-0528 {precision.upper()} with "
        f"{framework} {layout} on {tp} {hardware.upper()} ({_shape(isl, osl)} nominal, concurrency {conc}); "
        f"checkpoint {checkpoint}; per user = 1000/median TPOT({tpot_ms:.2f} ms); tok/s per GPU "
        f"counts input and output ({per_gpu:.1f}); median TTFT as printed; lengths: mean 0.9 x nominal "
        f"(random-range-ratio 0.8); output tok/s per GPU = {per_gpu:.1f} x {mean_out}/{mean_in + mean_out} "
        f"= {output_per_gpu:.1f}; one replica at concurrency {conc} emits conc x {mean_out} / (TTFT + "
        f"{mean_out - 1} x TPOT) = {replica_out:.0f} tok/s, so {replica_out / output_per_gpu:.2f} GPUs: "
        f"TP{tp}; {kv} KV cache"
        + (f" and per-step token budget {budget}" if budget else " (no token budget set)")
        + f" ({script} at InferenceX {SCRIPTS_COMMIT}); read from the InferenceX API response committed "
        f"as SemiAnalysisAI/InferenceX-app packages/app/cypress/fixtures/api/benchmarks.json at "
        f"{FIXTURE_COMMIT[:7]} (scripts/serving_rows_from_inferencex.py)"
    )
    return {
        "id": f"ix-dsr1-{hardware}-{framework}-{precision}-{_shape(isl, osl)}-{tag}-c{conc}",
        "source": "InferenceX",
        "hardware": hardware,
        "chips": str(tp),
        "model": "deepseek-r1",
        "weights": weights,
        "experts": experts,
        "kv": kv,
        "compute": compute,
        "expert_compute": expert_compute,
        "isl": str(mean_in),
        "osl": str(mean_out),
        "concurrency": str(conc),
        "concurrency_derived": "false",
        "tok_s_per_user": f"{per_user:.2f}",
        "tok_s_per_gpu": f"{per_gpu:.1f}",
        "ttft_s": f"{ttft:.4f}",
        "ttft_statistic": "median",
        "gpu_counts_input": "true",
        "attention_dp": str(tp) if dpa else "",
        "expert_parallel": str(ep) if ep > 1 else "",
        "dispatch_bytes": "",
        "overlap": "",
        "chunk_tokens": str(budget) if budget else "",
        "prefill_chips": "",
        "date": str(record["date"]),
        "source_url": FIXTURE_URL,
        "notes": notes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixture", type=Path, help="benchmarks.json of InferenceX-app at the commit above")
    parser.add_argument("--table", type=Path, default=TABLE)
    args = parser.parse_args()
    records = json.loads(args.fixture.read_text())
    taken = [row for row in map(row_of, records) if row is not None]
    new = []
    for row in taken:
        gpus = implied_gpus(row)
        if abs(gpus / float(row["chips"]) - 1.0) > LAYOUT_TOLERANCE:
            print(f"left out {row['id']}: its figures imply {gpus:.2f} GPUs per replica, not {row['chips']}")
        else:
            new.append(row)
    new.sort(key=lambda r: (r["hardware"], r["id"].split("-")[3], r["id"].split("-")[4], r["id"]))
    if len({r["id"] for r in new}) != len(new):
        raise SystemExit("two records give the same row id")
    for row in new:
        if not (math.isfinite(float(row["tok_s_per_user"])) and float(row["tok_s_per_gpu"]) > 0):
            raise SystemExit(f"{row['id']}: a figure is missing")
    with args.table.open(newline="") as f:
        reader = csv.DictReader(f)
        columns = list(reader.fieldnames or [])
        kept = [row for row in reader if row["source_url"] != FIXTURE_URL]
    with args.table.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept + new)
    print(f"{len(new)} rows from {args.fixture} ({len(kept)} other rows kept) -> {args.table}")


if __name__ == "__main__":
    main()
