"""Run a Chatflow DSL in graphon (Dify's own workflow engine), turn after turn, without Dify.

Why: Dify imports a broken Chatflow without complaint, and a graph that imports can still fail at run
time. The only convincing proof that our DSL works is to run it in the engine Dify runs, with the same
node classes and the same output checks. graphon needs three things we do not have here — a model
behind every LLM node, a dify-sandbox for code nodes, and a knowledge base — so this module supplies
stand-ins for exactly those three and nothing else:

- every LLM-backed node (llm, question-classifier, parameter-extractor) gets a :class:`ScriptedLLM`
  that asks a *responder* for its text (tests: a per-turn script; ``dskit chat``: a live endpoint),
  counting calls and prompt characters per node;
- code nodes run through :class:`dskit.tooling.codegen.sandbox.LocalCodeExecutor`, the tooling's one
  code runner (a separate ``python -I -S`` process per run, checked as dify-sandbox would);
- knowledge-retrieval (not supported by graphon) becomes :class:`KnowledgeRetrievalStandIn`, which asks
  a *knowledge* callable for passages;
- a tool node's plugin daemon, when a *tool invoker* is given (:class:`.plugin_tools.PluginTools`: our
  plugin's tools, run in this process), is reached through graphon's own ``action_invoker`` hook of
  ``SlimToolNodeRuntime``; the runtime itself is graphon's.

Everything else — start, if-else, answer, assigner, http-request, template-transform, aggregator — is
graphon's own code. :class:`Conversation` carries conversation variables from turn to turn the way Dify
does (they live per conversation, everything else per run).

Third-party imports (graphon, pydantic, yaml) happen inside functions or in this tooling module only.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from dskit.tooling.codegen.sandbox import LocalCodeExecutor

# --------------------------------------------------------------------------------------------------
# What one LLM call and one turn look like to the caller
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LLMRequest:
    """One LLM invocation as the responder sees it."""

    node_id: str
    title: str
    node_type: str
    turn: int
    messages: tuple[tuple[str, str], ...]  # (role, text)

    @property
    def prompt_chars(self) -> int:
        """Characters sent to the model: the cost proxy we count (tokens need a tokenizer)."""
        return sum(len(text) for _, text in self.messages)

    @property
    def system(self) -> str:
        """All system messages joined (handy for responders that read the prompt)."""
        return "\n".join(text for role, text in self.messages if role == "system")

    @property
    def user(self) -> str:
        """The last user message."""
        users = [text for role, text in self.messages if role == "user"]
        return users[-1] if users else ""


@dataclass(frozen=True)
class LLMCall:
    """A finished LLM call: what was asked and what the responder said."""

    request: LLMRequest
    response: str

    @property
    def node_id(self) -> str:
        return self.request.node_id

    @property
    def prompt_chars(self) -> int:
        return self.request.prompt_chars


Responder = Callable[[LLMRequest], str]
Knowledge = Callable[[str], Sequence[Mapping[str, Any]]]
ToolInvoker = Callable[[str, Any, Mapping[str, Any]], Iterator[Any]]  # graphon's SlimActionInvoker


class ScriptError(LookupError):
    """A scripted run reached an LLM node the script has no answer for."""


class TurnError(RuntimeError):
    """The graph run failed; ``result`` holds everything that happened up to the failure."""

    def __init__(self, message: str, result: TurnResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass
class TurnResult:
    """Everything one turn produced, for assertions and for the cost bench."""

    turn: int
    query: str
    answer: str = ""
    variables: dict[str, Any] = field(default_factory=dict)
    llm_calls: list[LLMCall] = field(default_factory=list)
    code_runs: list[str] = field(default_factory=list)  # node ids, in run order
    path: list[str] = field(default_factory=list)  # node ids that ran, in start order
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)  # node id -> outputs
    errors: dict[str, str] = field(default_factory=dict)  # node id -> error (incl. handled ones)
    succeeded: bool = False
    graph_error: str = ""

    @property
    def llm_count(self) -> int:
        return len(self.llm_calls)

    @property
    def prompt_chars(self) -> int:
        return sum(call.prompt_chars for call in self.llm_calls)

    @property
    def code_count(self) -> int:
        return len(self.code_runs)

    def llm_calls_before(self, node_id: str) -> int:
        """LLM calls that finished before ``node_id`` started (e.g. before the state update)."""
        if node_id not in self.path:
            return self.llm_count
        before = set(self.path[: self.path.index(node_id)])
        return sum(1 for call in self.llm_calls if call.node_id in before)

    def output(self, node_id: str, name: str, default: Any = None) -> Any:
        return self.outputs.get(node_id, {}).get(name, default)


# --------------------------------------------------------------------------------------------------
# Responders
# --------------------------------------------------------------------------------------------------


class ScriptedResponder:
    """Answers each LLM node from the current turn's script.

    A script maps a node id or a node title to a text, or to a callable ``(LLMRequest) -> str`` for
    answers that depend on the prompt. A node the script does not name raises :class:`ScriptError`,
    so a flow that calls more models than the test expects fails loudly instead of passing quietly.
    """

    def __init__(self, default: Mapping[str, str | Responder] | None = None) -> None:
        self.default: dict[str, str | Responder] = dict(default or {})
        self.script: dict[str, str | Responder] = {}

    def set_turn(self, script: Mapping[str, str | Responder] | None) -> None:
        self.script = dict(script or {})

    def __call__(self, request: LLMRequest) -> str:
        for table in (self.script, self.default):
            for key in (request.node_id, request.title):
                if key in table:
                    answer = table[key]
                    return answer(request) if callable(answer) else str(answer)
        msg = (
            f"turn {request.turn}: no scripted answer for LLM node {request.node_id!r} "
            f"({request.title!r}); script has {sorted(self.script)}"
        )
        raise ScriptError(msg)


class _CountingExecutor:
    """Wraps an executor to record which code node ran (the executor does not know node ids)."""

    def __init__(self, inner: Any, node_id: str, ctx: _RunContext) -> None:
        self._inner = inner
        self._node_id = node_id
        self._ctx = ctx

    def execute(self, *, language: Any, code: str, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        self._ctx.record_code(self._node_id)
        return self._inner.execute(language=language, code=code, inputs=inputs)

    def is_execution_error(self, error: Exception) -> bool:
        return self._inner.is_execution_error(error)


# --------------------------------------------------------------------------------------------------
# Per-run context shared by the stand-ins
# --------------------------------------------------------------------------------------------------


class _RunContext:
    """Collects calls from the worker threads of one graph run."""

    def __init__(self, turn: int, responder: Responder, knowledge: Knowledge | None,
                 executor: Any, tool_invoker: ToolInvoker | None = None) -> None:
        self.turn = turn
        self.responder = responder
        self.knowledge = knowledge
        self.executor = executor
        self.tool_invoker = tool_invoker
        self.titles: dict[str, str] = {}
        self.llm_calls: list[LLMCall] = []
        self.code_runs: list[str] = []
        self._lock = threading.Lock()

    def record_llm(self, call: LLMCall) -> None:
        with self._lock:
            self.llm_calls.append(call)

    def record_code(self, node_id: str) -> None:
        with self._lock:
            self.code_runs.append(node_id)


# --------------------------------------------------------------------------------------------------
# graphon glue: the scripted LLM, the knowledge stand-in node and the node factory
# --------------------------------------------------------------------------------------------------

_GLUE: dict[str, Any] = {}
_GLUE_LOCK = threading.RLock()


def _message_text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        data = getattr(part, "data", None)
        parts.append(data if isinstance(data, str) else str(part))
    return "".join(parts)


def _role(message: Any) -> str:
    role = getattr(message, "role", "")
    return str(getattr(role, "value", role))


def _glue() -> dict[str, Any]:
    """Build the graphon-dependent classes once (graphon is imported lazily)."""
    with _GLUE_LOCK:
        if not _GLUE:
            _GLUE.update(_build_glue())
        return _GLUE


def _build_glue() -> dict[str, Any]:  # noqa: C901, PLR0915 - one place that knows graphon's shapes
    from graphon.dsl import importer as importer_module  # noqa: PLC0415
    from graphon.dsl import node_factory as factory_module  # noqa: PLC0415
    from graphon.entities.base_node_data import BaseNodeData  # noqa: PLC0415
    from graphon.enums import WorkflowNodeExecutionStatus  # noqa: PLC0415
    from graphon.model_runtime.entities.common_entities import I18nObject  # noqa: PLC0415
    from graphon.model_runtime.entities.llm_entities import (  # noqa: PLC0415
        LLMResult,
        LLMResultChunkDelta,
        LLMResultChunkWithStructuredOutput,
        LLMResultWithStructuredOutput,
        LLMUsage,
    )
    from graphon.model_runtime.entities.message_entities import (  # noqa: PLC0415
        AssistantPromptMessage,
    )
    from graphon.model_runtime.entities.model_entities import (  # noqa: PLC0415
        AIModelEntity,
        FetchFrom,
        ModelFeature,
        ModelType,
    )
    from graphon.node_events.base import NodeRunResult  # noqa: PLC0415
    from graphon.nodes.base.node import Node  # noqa: PLC0415
    from graphon.nodes.code.code_node import CodeNode  # noqa: PLC0415
    from graphon.nodes.code.entities import CodeNodeData  # noqa: PLC0415
    from graphon.nodes.llm.exc import LLMNodeError  # noqa: PLC0415

    class StructuredParseError(ValueError):
        """An answer a structured-output node cannot parse (Dify's OutputParserError)."""

    class ScriptedLLM:
        """Implements graphon's LLM protocol by asking the run's responder; no network."""

        def __init__(self, *, ctx: _RunContext, node_id: str, node_type: str, provider: str,
                     model_name: str, parameters: Mapping[str, Any] | None = None) -> None:
            self._ctx = ctx
            self._node_id = node_id
            self._node_type = node_type
            self._provider = provider
            self._model_name = model_name
            self._parameters = dict(parameters or {})

        @property
        def provider(self) -> str:
            return self._provider

        @property
        def model_name(self) -> str:
            return self._model_name

        @property
        def parameters(self) -> Mapping[str, Any]:
            return dict(self._parameters)

        @parameters.setter
        def parameters(self, value: Mapping[str, Any]) -> None:
            self._parameters = dict(value)

        @property
        def stop(self) -> Sequence[str] | None:
            return None

        def get_model_schema(self) -> Any:
            # No TOOL_CALL feature: parameter extractors use their prompt mode, which a scripted
            # text answer can serve. STRUCTURED_OUTPUT: a node that asks for structured output runs as
            # with a model that has it natively (graphon refuses the node for a model without it,
            # "stage=capability"). No context size: graphon skips token counting.
            return AIModelEntity(
                model=self._model_name,
                label=I18nObject(en_US=self._model_name),
                model_type=ModelType.LLM,
                features=[ModelFeature.STRUCTURED_OUTPUT],
                fetch_from=FetchFrom.CUSTOMIZABLE_MODEL,
                model_properties={},
                parameter_rules=[],
            )

        def get_llm_num_tokens(self, prompt_messages: Sequence[Any]) -> int:
            return sum(len(_message_text(m)) for m in prompt_messages) // 2

        def _answer(self, prompt_messages: Sequence[Any]) -> str:
            request = LLMRequest(
                node_id=self._node_id,
                title=self._ctx.titles.get(self._node_id, self._node_id),
                node_type=self._node_type,
                turn=self._ctx.turn,
                messages=tuple((_role(m), _message_text(m)) for m in prompt_messages),
            )
            try:
                text = self._ctx.responder(request)
            except ScriptError as error:
                raise LLMNodeError(str(error)) from error
            self._ctx.record_llm(LLMCall(request=request, response=text))
            return text

        def invoke_llm(self, *, prompt_messages: Sequence[Any], model_parameters: Mapping[str, Any],
                       tools: Any, stop: Any, stream: bool) -> Any:
            _ = model_parameters, tools, stop
            text = self._answer(prompt_messages)
            result = LLMResult(
                model=self._model_name,
                prompt_messages=list(prompt_messages),
                message=AssistantPromptMessage(content=text),
                usage=LLMUsage.empty_usage(),
            )
            if not stream:
                return result
            return _as_stream(result)

        def invoke_llm_with_structured_output(self, *, prompt_messages: Sequence[Any], json_schema: Any,
                                              model_parameters: Mapping[str, Any], stop: Any, stream: bool) -> Any:
            """As Dify does for a model with native structured output: the answer's text, and that text
            parsed as the structured output (graphon then checks it against the schema and fails the
            node when it does not fit). A text that is no JSON object fails here, as Dify's parser does."""
            _ = json_schema, model_parameters, stop
            text = self._answer(prompt_messages)
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                raise StructuredParseError(f"Failed to parse structured output: {text[:80]}")
            chunk = LLMResultChunkWithStructuredOutput(
                model=self._model_name, prompt_messages=list(prompt_messages), structured_output=parsed,
                delta=LLMResultChunkDelta(index=0, message=AssistantPromptMessage(content=text),
                                          usage=LLMUsage.empty_usage()))
            if not stream:
                return LLMResultWithStructuredOutput(model=self._model_name, prompt_messages=list(prompt_messages),
                                                     message=AssistantPromptMessage(content=text),
                                                     usage=LLMUsage.empty_usage(), structured_output=parsed)
            return iter([chunk])

        def is_structured_output_parse_error(self, error: Exception) -> bool:
            return isinstance(error, StructuredParseError)

    def _as_stream(result: Any) -> Iterator[Any]:
        from graphon.model_runtime.entities.llm_entities import (  # noqa: PLC0415
            LLMResultChunk,
            LLMResultChunkDelta,
        )

        yield LLMResultChunk(
            model=result.model,
            prompt_messages=result.prompt_messages,
            delta=LLMResultChunkDelta(index=0, message=result.message, usage=result.usage),
        )

    class KnowledgeRetrievalData(BaseNodeData):
        """The subset of Dify's knowledge-retrieval node data the stand-in reads."""

        type: str = "knowledge-retrieval"
        query_variable_selector: list[str]
        dataset_ids: list[str] = []
        retrieval_mode: str = "multiple"

    class KnowledgeRetrievalStandIn(Node[KnowledgeRetrievalData]):
        """Answers ``result`` (array of {content, title, metadata}) from the run's knowledge callable.

        graphon has no knowledge-retrieval node; Dify's returns passages of this shape, which the LLM
        node's context turns into text. No knowledge callable, or an empty dataset list in a real
        import, both give an empty result, which the FAQ answer must cope with.
        """

        node_type = "knowledge-retrieval"

        @classmethod
        def version(cls) -> str:
            return "1"

        def _run(self) -> Any:
            segment = self.runtime_state.variable_pool.get(self.node_data.query_variable_selector)
            query = segment.text if segment is not None else ""
            ctx: _RunContext | None = getattr(self, "_dskit_ctx", None)
            passages: list[dict[str, Any]] = []
            if ctx is not None and ctx.knowledge is not None:
                for index, item in enumerate(ctx.knowledge(query) or []):
                    passages.append({
                        "content": str(item.get("content", "")),
                        "title": str(item.get("title", f"passage {index + 1}")),
                        "metadata": {"_source": "knowledge", "score": item.get("score", 1.0),
                                     "position": index + 1},
                    })
            return NodeRunResult(
                status=WorkflowNodeExecutionStatus.SUCCEEDED,
                inputs={"query": query},
                outputs={"result": passages},
            )

        @classmethod
        def _extract_variable_selector_to_variable_mapping(
            cls, *, graph_config: Mapping[str, Any], node_id: str, node_data: Any,
        ) -> Mapping[str, Sequence[str]]:
            _ = graph_config
            return {f"{node_id}.query": list(node_data.query_variable_selector)}

    base = factory_module.SlimDslNodeFactory

    class ScriptedFactory(base):  # type: ignore[misc, valid-type]
        """graphon's DSL node factory with our three stand-ins; everything else untouched."""

        __slots__ = ()
        dskit_ctx: _RunContext | None = None  # set on a per-run subclass

        def _create_slim_llm_runtime(self, *, node_id: str, data: Mapping[str, Any],
                                     node_type_label: str) -> tuple[dict[str, Any], Any]:
            normalized, vendor, _plugin, _creds = self._resolve_slim_llm_settings(
                node_id=node_id, data=data, node_type_label=node_type_label,
            )
            model = normalized["model"]
            instance = ScriptedLLM(
                ctx=type(self).dskit_ctx,
                node_id=node_id,
                node_type=str(data.get("type", "")),
                provider=vendor,
                model_name=str(model.get("name") or ""),
                parameters=model.get("completion_params") or {},
            )
            return normalized, instance

        def _create_code_node(self, request: Any) -> Any:
            ctx = type(self).dskit_ctx
            return CodeNode(
                node_id=request.node_id,
                data=CodeNodeData.model_validate(request.data_payload),
                init_params=self.init_params,
                runtime_state=self.runtime_state,
                code_executor=_CountingExecutor(ctx.executor, request.node_id, ctx),
                code_limits=_oldest_dify_limits(factory_module._code_limits(self.credentials.code)),  # noqa: SLF001
            )

        def _create_tool_runtime(self, node_data: Any) -> Any:
            # graphon's own runtime, with graphon's hook for the daemon's socket when we have a
            # tool invoker (factory_module.SlimDslNodeFactory._create_tool_runtime, same arguments).
            ctx = type(self).dskit_ctx
            if ctx is None or ctx.tool_invoker is None:
                return super()._create_tool_runtime(node_data)
            plugin_id, provider, credential = self._resolve_tool_runtime_settings(node_data)
            return factory_module.SlimToolNodeRuntime(
                config=self.slim_client_config,
                plugin_id=plugin_id,
                provider=provider,
                provider_id=node_data.provider_id,
                tool_name=node_data.tool_name,
                credentials=credential.values,
                credential_type=credential.credential_type,
                action_invoker=ctx.tool_invoker,
            )

        def _create_knowledge_node(self, request: Any) -> Any:
            node = KnowledgeRetrievalStandIn(
                node_id=request.node_id,
                data=KnowledgeRetrievalData.model_validate(request.data_payload),
                init_params=self.init_params,
                runtime_state=self.runtime_state,
            )
            node._dskit_ctx = type(self).dskit_ctx  # noqa: SLF001
            return node

    ScriptedFactory.NODE_BUILDERS = {
        **base.NODE_BUILDERS,
        "code": ScriptedFactory._create_code_node,  # noqa: SLF001
        "knowledge-retrieval": ScriptedFactory._create_knowledge_node,  # noqa: SLF001
    }
    return {
        "importer": importer_module,
        "factory": ScriptedFactory,
        "supported": frozenset(importer_module.SUPPORTED_DEFAULT_FACTORY_NODE_TYPES)
        | {"knowledge-retrieval"},
        "parse_yaml": importer_module._parse_yaml,  # noqa: SLF001
    }


_PARSED: dict[int, tuple[str, Any]] = {}


def _fast_parse(text: str) -> Any:
    """graphon's ``_parse_yaml`` with libyaml and a cache: a 250 KB Chatflow takes 0.6 s to parse
    with the pure-Python loader, on every turn. Same result (a fresh deep copy each time)."""
    import copy  # noqa: PLC0415

    import yaml  # noqa: PLC0415

    key = hash(text)
    with _GLUE_LOCK:
        cached = _PARSED.get(key)
        if cached is None or cached[0] != text:
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            cached = (text, yaml.load(text, Loader=loader))  # noqa: S506 - a safe loader
            if len(_PARSED) > 16:
                _PARSED.clear()
            _PARSED[key] = cached
    parsed = copy.deepcopy(cached[1])
    if not isinstance(parsed, dict):
        return _glue()["parse_yaml"](text)  # let graphon raise its own error
    return parsed


@contextmanager
def _patched_importer(ctx: _RunContext) -> Iterator[None]:
    """Point ``graphon.dsl.loads`` at our factory for the duration of one ``loads`` call.

    graphon builds every node inside ``loads``; our factory hands each node the run context there,
    so the patch can be undone before the run starts and concurrent runs do not see each other.
    """
    glue = _glue()
    importer = glue["importer"]
    per_run = type("ScriptedFactoryRun", (glue["factory"],), {"__slots__": (), "dskit_ctx": ctx})
    with _GLUE_LOCK:
        saved = (importer.SlimDslNodeFactory, importer.SUPPORTED_DEFAULT_FACTORY_NODE_TYPES,
                 importer._parse_yaml)  # noqa: SLF001
        importer.SlimDslNodeFactory = per_run
        importer.SUPPORTED_DEFAULT_FACTORY_NODE_TYPES = glue["supported"]
        importer._parse_yaml = _fast_parse  # noqa: SLF001
        try:
            yield
        finally:
            (importer.SlimDslNodeFactory, importer.SUPPORTED_DEFAULT_FACTORY_NODE_TYPES,
             importer._parse_yaml) = saved  # noqa: SLF001


# --------------------------------------------------------------------------------------------------
# Loading and running
# --------------------------------------------------------------------------------------------------

# Any credential will do: the scripted LLM never calls out. graphon insists on one for openai.
_FAKE_CREDENTIALS = {"model_credentials": [{"values": {"api_key": "scripted-no-network"}}]}


def _dsl_variables(dsl_text: str, section: str) -> dict[str, Any]:
    doc = _fast_parse(dsl_text) or {}
    items = ((doc.get("workflow") or {}).get(section)) or []
    return {str(item["name"]): item.get("value") for item in items if isinstance(item, Mapping)}


def _node_titles(dsl_text: str) -> dict[str, str]:
    doc = _fast_parse(dsl_text) or {}
    nodes = (((doc.get("workflow") or {}).get("graph")) or {}).get("nodes") or []
    return {str(n["id"]): str((n.get("data") or {}).get("title", n["id"])) for n in nodes}


def _plain(value: Any) -> Any:
    """Segments and pydantic models to plain Python (for assertions and JSON)."""
    if hasattr(value, "to_object"):
        return value.to_object()
    if hasattr(value, "value") and value.__class__.__name__.endswith("Segment"):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


# graphon.dsl's import in parts (graphon 0.8.0's largest), so that loading it is not one silent wait.
GRAPHON_PARTS = (("graphon.engine", "the engine"), ("graphon.dsl.code_runtime", "code nodes"),
                 ("graphon.dsl.importer", "the DSL importer"), ("graphon.dsl", "the DSL"))


class Conversation:
    """One Dify conversation with a Chatflow DSL: conversation variables survive between turns.

    Each :meth:`turn` loads the DSL afresh with ``graphon.dsl.loads`` (as Dify builds a new run per
    message), writes the carried conversation variables into the pool, runs the graph and reads the
    variables back. Environment variables come from the DSL unless ``env`` overrides them.
    """

    def __init__(
        self,
        dsl_text: str,
        *,
        responder: Responder | None = None,
        knowledge: Knowledge | None = None,
        code_executor: Any | None = None,
        env: Mapping[str, Any] | None = None,
        conversation_id: str | None = None,
        user_id: str = "dskit-user",
        workers: int = 1,
        tool_invoker: ToolInvoker | None = None,
    ) -> None:
        self.dsl_text = dsl_text
        self.tool_invoker = tool_invoker
        self.scripted = responder is None
        self.responder: Responder = responder or ScriptedResponder()
        self.knowledge = knowledge
        self.executor = code_executor or LocalCodeExecutor()
        self.env = dict(env or {})
        self.conversation_id = conversation_id or str(uuid.uuid4())
        self.user_id = user_id
        self.workers = workers
        self.variables: dict[str, Any] = _dsl_variables(dsl_text, "conversation_variables")
        self.titles = _node_titles(dsl_text)
        self.turns: list[TurnResult] = []

    def turn(self, query: str, script: Mapping[str, str | Responder] | None = None, *,
             raise_on_error: bool = True) -> TurnResult:
        """Run one user message; ``script`` answers this turn's LLM nodes (scripted mode only)."""
        if script is not None:
            if not isinstance(self.responder, ScriptedResponder):
                raise TypeError("a script needs the scripted responder (no responder= given)")
            self.responder.set_turn(script)
        elif isinstance(self.responder, ScriptedResponder):
            self.responder.set_turn({})
        index = len(self.turns) + 1
        ctx = _RunContext(index, self.responder, self.knowledge, self.executor, self.tool_invoker)
        ctx.titles = self.titles
        result = TurnResult(turn=index, query=query)
        engine = self._load(ctx, query, index)
        self._collect(engine, result)
        result.llm_calls = list(ctx.llm_calls)
        result.code_runs = list(ctx.code_runs)
        # Read back even after a failed run: Dify persists an assigner's write as the node runs
        # (api/core/workflow/nodes/variable_assigner/v2/node.py ``_run``: ``conv_var_updater.update``
        # then ``flush``), so what ran before the failure stays written, and nothing else changes.
        self.variables = self._read_conversation(engine)
        result.variables = dict(self.variables)
        self.turns.append(result)
        if not result.succeeded and raise_on_error:
            detail = "; ".join(f"{k}: {v}" for k, v in result.errors.items()) or result.graph_error
            raise TurnError(f"turn {index} ({query!r}) failed: {detail}", result)
        return result

    def prepare(self, progress: Callable[[str], None] | None = None) -> None:
        """Do now, each step told to ``progress``, what the first turn would do before answering: load
        graphon, then check every code node as Dify's sandbox would and compile it. Seconds on a fresh
        machine; ``dskit demo`` and ``dskit chat`` show them instead of a silent first turn."""
        import importlib  # noqa: PLC0415

        step = progress or (lambda _what: None)
        for module, part in GRAPHON_PARTS:  # what the first turn imports: 2 s, in parts of under one
            step(f"loading graphon, Dify's workflow engine: {part}")
            try:
                importlib.import_module(module)
            except ImportError:  # another graphon release, other modules: the last part imports it all
                continue

        prepare = getattr(self.executor, "prepare", None)
        if prepare is None:
            return
        doc = _fast_parse(self.dsl_text) or {}
        for node in (((doc.get("workflow") or {}).get("graph")) or {}).get("nodes") or []:
            data = (node.get("data") or {}) if isinstance(node, Mapping) else {}
            if data.get("type") == "code" and isinstance(data.get("code"), str):
                title = str(data.get("title") or node.get("id"))
                step(f"code node {title}")
                prepare(data["code"], lambda what, title=title: step(f"code node {title}: {what}"))

    def build_engine(self, query: str = "") -> Any:
        """A graphon engine for the next turn, built but not run (graph validated, nodes created)."""
        index = len(self.turns) + 1
        ctx = _RunContext(index, self.responder, self.knowledge, self.executor, self.tool_invoker)
        ctx.titles = self.titles
        return self._load(ctx, query, index)

    def _load(self, ctx: _RunContext, query: str, index: int) -> Any:
        from graphon.dsl import loads  # noqa: PLC0415

        run_context = {
            "conversation_id": self.conversation_id,
            "user_id": self.user_id,
            "dialogue_count": index,
            "app_id": "dskit-local",
            "workflow_run_id": str(uuid.uuid4()),
        }
        with _patched_importer(ctx):
            engine = loads(self.dsl_text, credentials=_FAKE_CREDENTIALS,
                           start_inputs={"query": query}, run_context=run_context,
                           workers=self.workers)
        pool = engine.runtime_state.variable_pool
        for name, value in self.env.items():
            pool.add(("env", name), value)
        for name, value in self.variables.items():
            pool.add(("conversation", name), value)
        return engine

    def _collect(self, engine: Any, result: TurnResult) -> None:
        answers: list[str] = []
        try:
            self._consume(engine.run(), result, answers)
        except Exception as error:  # noqa: BLE001 - graphon re-raises a node's failure at the end
            result.succeeded = False
            result.graph_error = result.graph_error or f"{type(error).__name__}: {error}"
        result.answer = "".join(answers)

    @staticmethod
    def _consume(events: Iterator[Any], result: TurnResult, answers: list[str]) -> None:
        for event in events:
            kind = type(event).__name__
            node_id = getattr(event, "node_id", "")
            if kind == "NodeRunStartedEvent":
                result.path.append(node_id)
            elif kind in {"NodeRunSucceededEvent", "NodeRunExceptionEvent"}:
                outputs = _plain(dict(event.node_run_result.outputs or {}))
                result.outputs[node_id] = outputs
                if kind == "NodeRunExceptionEvent":
                    result.errors[node_id] = str(getattr(event, "error", ""))
                if event.node_type == "answer":
                    answers.append(str(outputs.get("answer", "")))
            elif kind == "NodeRunFailedEvent":
                result.errors[node_id] = str(event.error)
            elif kind == "GraphRunSucceededEvent":
                result.succeeded = True
            elif kind in {"GraphRunFailedEvent", "GraphRunAbortedEvent"}:
                result.graph_error = str(getattr(event, "error", "") or getattr(event, "reason", ""))
            elif kind == "GraphRunPartialSucceededEvent":
                result.succeeded = True

    def _read_conversation(self, engine: Any) -> dict[str, Any]:
        pool = engine.runtime_state.variable_pool
        values = {}
        for name in self.variables:
            segment = pool.get(("conversation", name))
            values[name] = _plain(segment) if segment is not None else None
        return values


def run_turns(dsl_text: str, turns: Sequence[tuple[str, Mapping[str, str | Responder]]],
              **kwargs: Any) -> list[TurnResult]:
    """Convenience: run (query, script) pairs in one conversation."""
    conversation = Conversation(dsl_text, **kwargs)
    return [conversation.turn(query, script) for query, script in turns]


def _oldest_dify_limits(limits: Any) -> Any:
    """graphon's code limits with the string cap of the oldest Dify we support (dskit/base/limits.py:
    80,000 characters in Dify 1.8.0; graphon's default is the 400,000 of later releases), so a node
    output that Dify 1.8 would refuse fails here too."""
    import dataclasses  # noqa: PLC0415

    from dskit.base.limits import CODE_MAX_STRING_LENGTH  # noqa: PLC0415

    return dataclasses.replace(limits, max_string_length=min(limits.max_string_length, CODE_MAX_STRING_LENGTH))
