"""A user's model in ONNX test-data layout (``model.onnx`` + ``test_data_set_0/input_<i>.pb``)
cut down to one of its Pad nodes, for ``padconf minimize``: the whole model is run on the
runtime (what the user saw), then the graph up to each Pad, to get the arrays that really reach
the Pad; each Pad becomes a padconf case, which minimize then runs alone.

Every run goes through the isolated worker. The graph up to the Pad runs on the runtime under
test (its own Pad inputs are what its Pad got); when the runtime cannot run it, on onnx's
reference evaluator. Pads inside subgraphs (If, Loop, Scan bodies) are not looked for.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import onnx
from onnx import helper

from padconf.cases.case import Case, InputBudget
from padconf.core.dtypes import OverBudget, bit_equal
from padconf.core.errors import CaseError
from padconf.core.vocabulary import Placement, Status
from padconf.execution.worker import Worker
from padconf.spec.loader import Spec
from padconf.suite.folders import fed_inputs, initializers, load_model, load_tensor, opset_of, pad_node_case

# A user's whole model (or the graph up to a Pad) may take minutes, not a Pad's milliseconds: every
# run of one model together (its whole run, then the graph up to each Pad on each worker), for a
# 445-byte Loop feeding two Pads kept minimize busy 903 s, 300 s a run (attack round III)
MODEL_TIMEOUT_S = 300.0


@dataclass
class PadInModel:
    node: onnx.NodeProto
    case: Case  # not classified yet
    placement: Placement
    inputs_from: str  # the runtime that computed the Pad's inputs


def _ancestors(graph: onnx.GraphProto, names: list[str]) -> list[onnx.NodeProto]:
    """The nodes that ``names`` depend on, in graph order."""
    producer = {out: i for i, node in enumerate(graph.node) for out in node.output}
    wanted, todo = set(), [n for n in names if n in producer]
    while todo:
        i = producer[todo.pop()]
        if i not in wanted:
            wanted.add(i)
            todo += [n for n in graph.node[i].input if n in producer]
    return [graph.node[i] for i in sorted(wanted)]


def upstream_model(model: onnx.ModelProto, names: list[str]) -> onnx.ModelProto:
    """``model`` cut to the nodes that compute ``names``, which become its outputs (untyped:
    onnxruntime and OpenVINO infer them)."""
    graph = model.graph
    nodes = _ancestors(graph, names)
    used = {n for node in nodes for n in node.input}
    cut = helper.make_graph(nodes, f"{graph.name}_up_to_pad", [i for i in graph.input if i.name in used],
                            [onnx.ValueInfoProto(name=n) for n in names],
                            [i for i in graph.initializer if i.name in used])
    out = helper.make_model(cut, opset_imports=model.opset_import, ir_version=model.ir_version)
    out.functions.extend(model.functions)
    return out


MAX_PAD_NODES = 64  # of a model minimize takes: each Pad is run up to and minimized on its own


class UserModel:
    """The model directory, its fed inputs and (when the directory has them) expected outputs."""

    def __init__(self, where: Path):
        self.where = where
        self.model = load_model(where / "model.onnx")
        self.opset = opset_of(self.model, where)
        self.feeds = fed_inputs(self.model, where)
        self.constants = initializers(self.model, where / "model.onnx")
        outputs = sorted((where / "test_data_set_0").glob("output_*.pb"))
        odd = [p.name for p in outputs if not re.fullmatch(r"output_[0-9]+\.pb", p.name)]
        if odd:
            raise CaseError(f"{where / 'test_data_set_0' / odd[0]}: not output_<number>.pb")
        self.expected = [load_tensor(p, where) for p in sorted(outputs, key=lambda p: int(p.stem.split("_")[1]))]
        self.seconds_left = MODEL_TIMEOUT_S  # every run of the model's together (_run)
        self.pads = [n for n in self.model.graph.node if n.op_type == "Pad" and n.domain in ("", "ai.onnx")]
        if len(self.pads) > MAX_PAD_NODES:  # each costs a run of the graph up to it, and a minimization
            raise CaseError(f"{where}/model.onnx: {len(self.pads)} Pad nodes; minimize takes a model of at most "
                            f"{MAX_PAD_NODES}: cut it to the part that fails")
        if not self.pads:
            raise CaseError(f"{where}/model.onnx: no Pad node in the main graph "
                            f"({len(self.model.graph.node)} nodes: "
                            f"{', '.join(sorted({n.op_type for n in self.model.graph.node}))})")

    def _run(self, worker: Worker, model: onnx.ModelProto, feeds: dict):
        """``worker``'s run of ``model`` on ``feeds``, within what is left of MODEL_TIMEOUT_S for
        every run of this model together; none once it is spent (a CaseError)."""
        if self.seconds_left <= 1:
            raise CaseError(f"{self.where}: running the model (whole, and up to its Pads) took its "
                            f"{MODEL_TIMEOUT_S:.0f} s in all: cut it to the part that fails")
        started = time.monotonic()
        try:
            return worker.run_model(model.SerializeToString(), feeds, self.seconds_left)
        finally:
            self.seconds_left -= time.monotonic() - started

    def whole_run(self, worker: Worker) -> str:
        """What the runtime does with the whole model, in one line (for the report)."""
        outputs, error, status = self._run(worker, self.model, self.feeds)
        if status != Status.OK:
            return f"{status}: {error}"
        if error:
            return f"refused: {error}"
        if not self.expected:
            return "ran (the directory has no output_<i>.pb to compare with)"
        assert outputs is not None  # it ran
        differ = [i for i, (got, want) in enumerate(zip(outputs, self.expected)) if not bit_equal(got, want)]
        return (f"output(s) {', '.join(map(str, differ))} differ from test_data_set_0/output_<i>.pb" if differ
                else "every output equals test_data_set_0/output_<i>.pb")

    def pad_inputs(self, node: onnx.NodeProto, workers: list[Worker]) -> tuple[dict, str]:
        """The arrays reaching ``node``'s inputs, and the runtime that computed them (the first of
        ``workers`` that can run the graph up to the Pad)."""
        known = {**self.constants, **self.feeds}
        computed = [n for n in node.input if n and n not in known]
        if not computed:
            return known, "the model's own inputs and initializers"
        sub = upstream_model(self.model, computed)
        feeds = {i.name: self.feeds[i.name] for i in sub.graph.input}
        why = []
        for worker in workers:
            outputs, error, status = self._run(worker, sub, feeds)
            if status == Status.OK and not error and outputs is not None:
                return {**known, **dict(zip(computed, outputs))}, worker.adapter
            why.append(f"{worker.adapter}: {status if status != 'ok' else 'refused'}: {error}")
        raise CaseError(f"{self.where}: cannot compute the inputs of Pad node {node.name!r}: {'; '.join(why)}")

    def pad_cases(self, workers: list[Worker], specs: list[Spec]) -> list[PadInModel]:
        """A case for each Pad node, the work they imply bounded together (InputBudget)."""
        out, budget = [], InputBudget(f"{self.where}'s Pad nodes")
        for node in self.pads:
            values, source = self.pad_inputs(node, workers)
            case, placement = pad_node_case(node, self.opset, values, set(self.constants), specs, self.where)
            try:
                budget.take_work(case)
            except OverBudget as exc:
                raise CaseError(f"{self.where}: Pad node {node.name[:80]!r}: {exc}") from None
            out.append(PadInModel(node, case, Placement(placement), source))
        return out
