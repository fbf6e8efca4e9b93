/** The side panel: a form per node type, the node's connections, and the flow's state schema. */

import { useEffect, useState } from "react";
import { checkConnection, edgeSourceHandle, edgeTargetHandle, sourceHandles, targetHandles } from "../designer/handles";
import { findBackEdges } from "../graph/layout";
import {
  addListEntry,
  idProblem,
  moveListEntry,
  NODE_DESCRIPTIONS,
  NODE_ICONS,
  patchNode,
  removeElements,
  removeListEntry,
  renameListEntry,
  replaceNode,
  stateWriters,
} from "../designer/ops";
import type { Json } from "../designer/inputSchema";
import type { GraphDocument, GraphNode, Reducer, StateField } from "../graph/types";
import { type ActionInfo, api, type Problem } from "./api";
import { InputFieldsEditor } from "./InputFields";
import { FieldProblems, NameListEditor, NumberField, PairsEditor, SelectField, TextField } from "./fields";

const REDUCERS: Reducer[] = ["overwrite", "append", "sum", "min", "max", "merge", "union"];

interface InspectorProps {
  doc: GraphDocument;
  node: GraphNode | null;
  readOnly: boolean;
  problems: Problem[];
  actions: ActionInfo[];
  actionOutcomes: Record<string, string[]>;
  approvalGroups?: string[];
  onChange: (doc: GraphDocument) => void;
  onSelectNode: (id: string | null) => void;
}

type Raw = Record<string, unknown>;

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function record(value: unknown): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
}

export function Inspector(props: InspectorProps) {
  const { node } = props;
  return (
    <aside className="braid-inspector" tabIndex={0} aria-label={node ? `Settings of ${node.id}` : "Flow settings"}>
      {node === null ? <FlowSettings {...props} /> : <NodeSettings {...props} node={node} />}
    </aside>
  );
}

function NodeSettings({ doc, node, readOnly, problems, actions, actionOutcomes, approvalGroups = [], onChange, onSelectNode }: InspectorProps & { node: GraphNode }) {
  const raw = node as unknown as Raw;
  const mine = problems.filter((p) => p.node === node.id);
  const forField = (field: string) => mine.filter((p) => p.field === field || (p.field ?? "").startsWith(`${field}.`) || (p.field ?? "").startsWith(`${field}[`));
  const general = mine.filter((p) => p.field === null);
  const patch = (values: Raw) => onChange(patchNode(doc, node.id, values));
  const stateFields = Object.keys(doc.state ?? {});
  const disabled = readOnly;
  return (
    <div className="braid-inspector__body">
      <h2>
        <span aria-hidden="true">{NODE_ICONS[node.type]} </span>
        {node.type} <code>{node.id}</code>
      </h2>
      <p className="braid-inspector__description">{NODE_DESCRIPTIONS[node.type]}</p>
      <FieldProblems problems={general} />
      <TextField
        label="Id"
        value={node.id}
        disabled={disabled}
        check={(id) => idProblem(doc, node.id, id)}
        onCommit={(id) => {
          onChange(replaceNode(doc, node.id, { ...node, id }));
          onSelectNode(id);
        }}
      />
      <TypeForm doc={doc} node={node} raw={raw} disabled={disabled} patch={patch} forField={forField} actions={actions} stateFields={stateFields} approvalGroups={approvalGroups} onChange={onChange} />
      <Connections doc={doc} node={node} disabled={disabled} actionOutcomes={actionOutcomes} onChange={onChange} />
      {!disabled && (
        <button type="button" className="braid-danger" onClick={() => { onChange(removeElements(doc, new Set([node.id]))); onSelectNode(null); }}>
          Delete {node.id}
        </button>
      )}
    </div>
  );
}

interface TypeFormProps {
  doc: GraphDocument;
  node: GraphNode;
  raw: Raw;
  disabled: boolean;
  patch: (values: Raw) => void;
  forField: (field: string) => Problem[];
  actions: ActionInfo[];
  stateFields: string[];
  approvalGroups: string[];
  onChange: (doc: GraphDocument) => void;
}

function stateOptions(fields: string[], noneLabel = "(none)") {
  return [{ value: "", label: noneLabel }, ...fields.map((field) => ({ value: field, label: field }))];
}

function TypeForm({ doc, node, raw, disabled, patch, forField, actions, stateFields, approvalGroups, onChange }: TypeFormProps) {
  switch (node.type) {
    case "start":
    case "end":
      return <p className="braid-empty">No settings.</p>;
    case "task":
      return <TaskForm raw={raw} disabled={disabled} patch={patch} forField={forField} actions={actions} stateFields={stateFields} />;
    case "set":
      return (
        <PairsEditor
          label="Values (state field ← CEL)"
          keyLabel="field"
          valueLabel="CEL"
          pairs={record(raw.values)}
          disabled={disabled}
          keyOptions={stateFields}
          problemsFor={(key) => forField(`values.${key}`)}
          onChange={(values) => patch({ values })}
        />
      );
    case "if":
      return <TextField label="Condition (CEL)" mono value={str(raw.condition)} disabled={disabled} problems={forField("condition")} onCommit={(condition) => patch({ condition })} />;
    case "switch":
      return <SwitchForm raw={raw} disabled={disabled} patch={patch} forField={forField} />;
    case "fork":
    case "race":
      return (
        <NameListEditor
          label="Branches"
          addLabel="New branch name"
          names={strings(raw.branches)}
          disabled={disabled}
          problems={forField("branches")}
          onRename={(from, to) => onChange(renameListEntry(doc, node.id, "branches", from, to))}
          onMove={(name, by) => onChange(moveListEntry(doc, node.id, "branches", name, by))}
          onRemove={(name) => onChange(removeListEntry(doc, node.id, "branches", name))}
          onAdd={(name) => onChange(addListEntry(doc, node.id, "branches", name))}
        />
      );
    case "gather":
      return (
        <>
          <p className="braid-field__hint">
            Every slot must be filled (AND); several edges into one slot are alternatives (OR). State merges in slot order.
          </p>
          <NameListEditor
            label="Slots"
            addLabel="New slot name"
            names={strings(raw.slots)}
            disabled={disabled}
            problems={forField("slots")}
            onRename={(from, to) => onChange(renameListEntry(doc, node.id, "slots", from, to))}
            onMove={(name, by) => onChange(moveListEntry(doc, node.id, "slots", name, by))}
            onRemove={(name) => onChange(removeListEntry(doc, node.id, "slots", name))}
            onAdd={(name) => onChange(addListEntry(doc, node.id, "slots", name))}
          />
        </>
      );
    case "foreach":
      return (
        <>
          <TextField label="Items (CEL list)" mono value={str(raw.items)} disabled={disabled} problems={forField("items")} onCommit={(items) => patch({ items })} />
          <TextField label="Variable (as)" value={str(raw.as)} disabled={disabled} problems={forField("as")} onCommit={(as) => patch({ as })} />
          <NumberField label="Concurrency" min={1} value={typeof raw.concurrency === "number" ? raw.concurrency : undefined} disabled={disabled} problems={forField("concurrency")} onCommit={(concurrency) => patch({ concurrency })} />
          <SelectField
            label="When an item fails"
            value={str(raw.on_item_failure) || "fail"}
            disabled={disabled}
            options={[
              { value: "fail", label: "fail the foreach" },
              { value: "skip", label: "skip the item's writes" },
              { value: "collect", label: "collect the error and go on" },
            ]}
            problems={forField("on_item_failure")}
            onChange={(on_item_failure) => patch({ on_item_failure })}
          />
          <SelectField
            label="Errors field (an append field, for collect)"
            value={str(raw.errors)}
            disabled={disabled}
            options={stateOptions(stateFields.filter((f) => doc.state?.[f]?.reducer === "append"))}
            problems={forField("errors")}
            onChange={(errors) => patch({ errors: errors === "" ? undefined : errors })}
          />
        </>
      );
    case "loop":
      return (
        <>
          <TextField label="While (CEL)" mono value={str(raw.while)} disabled={disabled} problems={forField("while")} onCommit={(value) => patch({ while: value })} />
          <NumberField label="Max iterations" min={1} value={typeof raw.max_iterations === "number" ? raw.max_iterations : undefined} disabled={disabled} problems={forField("max_iterations")} onCommit={(max_iterations) => patch({ max_iterations })} />
          <TextField label="Iteration variable (as, optional)" value={str(raw.as)} disabled={disabled} problems={forField("as")} onCommit={(as) => patch({ as: as === "" ? undefined : as })} />
        </>
      );
    case "approval":
      return <ApprovalForm raw={raw} disabled={disabled} patch={patch} forField={forField} stateFields={stateFields} approvalGroups={approvalGroups} />;
    case "wait":
      return <WaitForm raw={raw} disabled={disabled} patch={patch} forField={forField} />;
    case "subflow":
      return <SubflowForm raw={raw} disabled={disabled} patch={patch} forField={forField} stateFields={stateFields} />;
    case "fail":
      return <TextField label="Error message" value={str(raw.error)} disabled={disabled} problems={forField("error")} onCommit={(error) => patch({ error })} />;
  }
}

function TaskForm({ raw, disabled, patch, forField, actions, stateFields }: Pick<TypeFormProps, "raw" | "disabled" | "patch" | "forField" | "actions" | "stateFields">) {
  const action = str(raw.action);
  const known = actions.find((a) => a.name === action);
  const options = actions.map((a) => ({ value: a.name, label: a.name }));
  if (known === undefined) options.unshift({ value: action, label: action === "" ? "(choose an action)" : `${action} (not registered)` });
  const params = typeof raw.params === "object" && raw.params !== null ? raw.params : {};
  return (
    <>
      <SelectField label="Action" value={action} options={options} disabled={disabled} problems={forField("action")} onChange={(value) => patch({ action: value })} />
      {known !== undefined && (
        <p className="braid-field__hint">
          Outcomes: {known.outcomes.join(", ")}.{" "}
          {known.params.length === 0
            ? "Takes no params."
            : `Params: ${known.params.map((p) => `${p.name} (${p.types.join(" or ")}${p.required ? ", required" : ""})`).join("; ")}.`}
        </p>
      )}
      <TextField
        label="Params (JSON object)"
        mono
        multiline
        value={JSON.stringify(params)}
        disabled={disabled}
        problems={forField("params")}
        check={(text) => {
          try {
            const value: unknown = JSON.parse(text);
            return typeof value === "object" && value !== null && !Array.isArray(value) ? null : "Give a JSON object, e.g. {}.";
          } catch {
            return "This is not valid JSON.";
          }
        }}
        onCommit={(text) => patch({ params: JSON.parse(text) as unknown })}
      />
      <SelectField label="Output (state field receiving the result)" value={str(raw.output)} options={stateOptions(stateFields)} disabled={disabled} problems={forField("output")} onChange={(output) => patch({ output: output === "" ? undefined : output })} />
      <NumberField label="Timeout (seconds)" integer={false} value={typeof raw.timeout_s === "number" ? raw.timeout_s : undefined} disabled={disabled} problems={forField("timeout_s")} onCommit={(timeout_s) => patch({ timeout_s })} />
    </>
  );
}

function SwitchForm({ raw, disabled, patch, forField }: Pick<TypeFormProps, "raw" | "disabled" | "patch" | "forField">) {
  const cases = Array.isArray(raw.cases) ? (raw.cases as { when?: unknown; outcome?: unknown }[]) : [];
  const setCase = (index: number, value: { when?: unknown; outcome?: unknown }) => patch({ cases: cases.map((c, i) => (i === index ? value : c)) });
  return (
    <fieldset className="braid-list">
      <legend>Cases, tried in order</legend>
      {cases.map((item, index) => (
        <div className="braid-pair" key={index}>
          <TextField label={`Case ${index + 1} when (CEL)`} mono value={str(item.when)} disabled={disabled} problems={forField(`cases[${index}].when`)} onCommit={(when) => setCase(index, { ...item, when })} />
          <TextField label={`Case ${index + 1} outcome`} value={str(item.outcome)} disabled={disabled} problems={forField(`cases[${index}].outcome`)} onCommit={(outcome) => setCase(index, { ...item, outcome })} />
          {!disabled && (
            <button type="button" aria-label={`Remove case ${index + 1}`} onClick={() => patch({ cases: cases.filter((_, i) => i !== index) })}>
              ✕
            </button>
          )}
        </div>
      ))}
      {!disabled && (
        <button type="button" onClick={() => patch({ cases: [...cases, { when: "true", outcome: `case${cases.length + 1}` }] })}>
          Add a case
        </button>
      )}
      <TextField label="Default outcome" value={str(raw.default)} disabled={disabled} problems={forField("default")} onCommit={(value) => patch({ default: value })} />
    </fieldset>
  );
}

function policyKind(policy: unknown): string {
  return typeof policy === "object" && policy !== null ? "quorum" : str(policy) || "all";
}

function ApprovalForm({ raw, disabled, patch, forField, stateFields, approvalGroups }: Pick<TypeFormProps, "raw" | "disabled" | "patch" | "forField" | "stateFields" | "approvalGroups">) {
  const groups = strings(raw.groups);
  const quorum = typeof raw.policy === "object" && raw.policy !== null ? Number((raw.policy as Raw).quorum) : undefined;
  return (
    <>
      <NameListEditor
        label="Groups who decide"
        addLabel="Add a group (e.g. finance)"
        names={groups}
        disabled={disabled}
        problems={forField("groups")}
        onRename={(from, to) => patch({ groups: groups.map((g) => (g === from ? to : g)) })}
        onRemove={(name) => patch({ groups: groups.filter((g) => g !== name) })}
        onAdd={(name) => patch({ groups: [...groups, name] })}
        suggestions={approvalGroups.filter((g) => !groups.includes(g))}
      />
      <SelectField
        label="Policy"
        value={policyKind(raw.policy)}
        disabled={disabled}
        problems={forField("policy")}
        options={[
          { value: "all", label: "all: every group approves" },
          { value: "any", label: "any: one approval is enough" },
          { value: "quorum", label: "quorum: a number of approvals" },
        ]}
        onChange={(kind) => patch({ policy: kind === "quorum" ? { quorum: quorum ?? 2 } : kind })}
      />
      {policyKind(raw.policy) === "quorum" && <NumberField label="Quorum" min={1} value={quorum} disabled={disabled} onCommit={(n) => patch({ policy: { quorum: n ?? 1 } })} />}
      <TextField label="Title (${CEL} is interpolated)" value={str(raw.title)} disabled={disabled} problems={forField("title")} onCommit={(title) => patch({ title })} />
      <TextField label="Instructions" multiline value={str(raw.instructions)} disabled={disabled} problems={forField("instructions")} onCommit={(instructions) => patch({ instructions: instructions === "" ? undefined : instructions })} />
      <TextField
        label="State fields the approvers see (comma-separated)"
        value={strings(raw.show).join(", ")}
        disabled={disabled}
        problems={forField("show")}
        hint={stateFields.length > 0 ? `Declared: ${stateFields.join(", ")}` : undefined}
        onCommit={(text) => {
          const show = text.split(",").map((s) => s.trim()).filter(Boolean);
          patch({ show: show.length === 0 ? undefined : show });
        }}
      />
      <NumberField label="Overdue after (seconds)" value={typeof raw.due_in_s === "number" ? raw.due_in_s : undefined} disabled={disabled} problems={forField("due_in_s")} onCommit={(due_in_s) => patch({ due_in_s })} />
      <label className="braid-check">
        <input type="checkbox" checked={raw.allow_starter === true} disabled={disabled} onChange={(event) => patch({ allow_starter: event.target.checked ? true : undefined })} /> The run's starter may decide
      </label>
    </>
  );
}

function WaitForm({ raw, disabled, patch, forField }: Pick<TypeFormProps, "raw" | "disabled" | "patch" | "forField">) {
  const byTime = "until" in raw;
  return (
    <>
      <SelectField
        label="Wait"
        value={byTime ? "until" : "seconds"}
        disabled={disabled}
        options={[
          { value: "seconds", label: "for a number of seconds" },
          { value: "until", label: "until a time (CEL timestamp)" },
        ]}
        onChange={(kind) => patch(kind === "until" ? { seconds: undefined, until: "timestamp('2030-01-01T00:00:00Z')" } : { until: undefined, seconds: 60 })}
      />
      {byTime ? (
        <TextField label="Until (CEL timestamp)" mono value={str(raw.until)} disabled={disabled} problems={forField("until")} onCommit={(until) => patch({ until })} />
      ) : (
        <NumberField label="Seconds" integer={false} value={typeof raw.seconds === "number" ? raw.seconds : undefined} disabled={disabled} problems={forField("seconds")} onCommit={(seconds) => patch({ seconds })} />
      )}
    </>
  );
}

function SubflowForm({ raw, disabled, patch, forField, stateFields }: Pick<TypeFormProps, "raw" | "disabled" | "patch" | "forField" | "stateFields">) {
  const [flows, setFlows] = useState<{ slug: string; name: string }[] | null>(null);
  useEffect(() => {
    api<{ results: { slug: string; name: string }[] }>("GET", "/api/flows/?limit=500")
      .then((page) => setFlows(page.results))
      .catch(() => setFlows([]));
  }, []);
  const slug = str(raw.flow);
  const options = (flows ?? []).map((f) => ({ value: f.slug, label: `${f.name} (${f.slug})` }));
  if (!options.some((o) => o.value === slug)) options.unshift({ value: slug, label: slug === "" ? "(choose a flow)" : `${slug} (not found)` });
  return (
    <>
      <SelectField label="Child flow" value={slug} options={options} disabled={disabled} problems={forField("flow")} onChange={(flow) => patch({ flow })} />
      {slug !== "" && (
        <p>
          <a href={`/flows/${encodeURIComponent(slug)}/`} target="_blank" rel="noopener">
            Open {slug} in a new tab
          </a>
        </p>
      )}
      <NumberField label="Version (empty: latest published)" min={1} value={typeof raw.version === "number" ? raw.version : undefined} disabled={disabled} problems={forField("version")} onCommit={(version) => patch({ version })} />
      <PairsEditor label="Input (child input field ← CEL)" keyLabel="input field" valueLabel="CEL" pairs={record(raw.input)} disabled={disabled} problemsFor={(key) => forField(`input.${key}`)} onChange={(input) => patch({ input })} />
      <PairsEditor label="Output (parent field ← child field)" keyLabel="parent field" valueLabel="child field" pairs={record(raw.output)} disabled={disabled} keyOptions={stateFields} problemsFor={(key) => forField(`output.${key}`)} onChange={(output) => patch({ output })} />
    </>
  );
}

/** Each outcome/branch handle with where it leads: connect and disconnect by keyboard. */
function Connections({ doc, node, disabled, actionOutcomes, onChange }: { doc: GraphDocument; node: GraphNode; disabled: boolean; actionOutcomes: Record<string, string[]>; onChange: (doc: GraphDocument) => void }) {
  const handles = sourceHandles(node, actionOutcomes);
  const [refusal, setRefusal] = useState<string | null>(null);
  if (handles.length === 0) return null;
  const back = findBackEdges(doc);
  const byId = new Map(doc.nodes.map((n) => [n.id, n]));
  const targets = doc.nodes
    .filter((n) => n.id !== node.id && n.type !== "start")
    .flatMap((n) =>
      targetHandles(n).map((h) => ({
        value: `${n.id}\u0000${h.id}`,
        label: n.type === "gather" ? `${n.id} · slot ${h.label}` : h.id === "return" ? `${n.id} (return)` : n.id,
      })),
    );
  return (
    <fieldset className="braid-list">
      <legend>Connections</legend>
      {handles.map((handle) => {
        const index = doc.edges.findIndex((e) => e.source === node.id && edgeSourceHandle(e) === handle.id);
        const edge = index < 0 ? undefined : doc.edges[index]!;
        const current = edge === undefined ? "" : `${edge.target}\u0000${edgeTargetHandle(edge, byId.get(edge.target), back.has(index))}`;
        return (
          <SelectField
            key={handle.id}
            label={`${handle.kind === "branch" ? "Branch" : "Outcome"} ${handle.label} leads to`}
            value={current}
            disabled={disabled}
            options={[{ value: "", label: "(not connected)" }, ...targets, ...(current !== "" && !targets.some((t) => t.value === current) ? [{ value: current, label: edge!.target }] : [])]}
            onChange={(value) => {
              const without = index < 0 ? doc : removeElements(doc, new Set(), new Set([index]));
              if (value === "") {
                setRefusal(null);
                onChange(without);
                return;
              }
              const [target, targetHandle] = value.split("\u0000") as [string, string];
              const result = checkConnection(without, { source: node.id, sourceHandle: handle.id, target, targetHandle }, actionOutcomes);
              if (result.ok) {
                setRefusal(null);
                onChange({ ...without, edges: [...without.edges, result.edge] });
              } else setRefusal(result.reason);
            }}
          />
        );
      })}
      {refusal !== null && <div className="braid-field__problem braid-field__problem--error" role="alert">{refusal}</div>}
    </fieldset>
  );
}

function FlowSettings({ doc, readOnly, problems, onChange }: InspectorProps) {
  const state = doc.state ?? {};
  const writers = stateWriters(doc);
  const [newField, setNewField] = useState("");
  const [refusal, setRefusal] = useState<string | null>(null);
  const setState = (next: Record<string, StateField>) => onChange({ ...doc, state: next });
  const graphProblems = problems.filter((p) => p.node === null && p.edge === null);
  const addField = () => {
    const name = newField.trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) setRefusal("A field name starts with a letter or _ and has letters, digits and _.");
    else if (name in state) setRefusal(`${name} is already declared.`);
    else {
      setRefusal(null);
      setState({ ...state, [name]: { reducer: "overwrite" } });
      setNewField("");
    }
  };
  return (
    <div className="braid-inspector__body">
      <h2>Flow</h2>
      <p className="braid-inspector__description">Select a node to edit it. Here: the flow's name, its input fields and its state.</p>
      <FieldProblems problems={graphProblems} />
      <TextField label="Name" value={str(doc.name)} disabled={readOnly} onCommit={(name) => onChange({ ...doc, name })} />
      <InputFieldsEditor
        schema={(doc as { input?: Json }).input}
        readOnly={readOnly}
        onChange={(input) => onChange({ ...doc, input } as GraphDocument)}
      />
      <fieldset className="braid-list braid-state">
        <legend>State fields</legend>
        {Object.keys(state).length === 0 && <p className="braid-empty">No state fields. Add one below; set nodes and tasks write them.</p>}
        {Object.entries(state).map(([field, spec]) => (
          <div key={field} className="braid-state__row">
            <div className="braid-state__name">
              <code>{field}</code>
              <span className="braid-state__writers">{writers[field] ? `written by ${writers[field]!.join(", ")}` : "written by no node"}</span>
            </div>
            <SelectField
              label={`Reducer of ${field}`}
              value={spec.reducer}
              disabled={readOnly}
              options={REDUCERS.map((r) => ({ value: r, label: r }))}
              onChange={(reducer) => setState({ ...state, [field]: { ...spec, reducer: reducer as Reducer } })}
            />
            <TextField
              label={`Default of ${field} (JSON)`}
              mono
              value={spec.default === undefined ? "" : JSON.stringify(spec.default)}
              disabled={readOnly}
              placeholder="the reducer's default"
              check={(text) => {
                if (text.trim() === "") return null;
                try {
                  JSON.parse(text);
                  return null;
                } catch {
                  return "Give a JSON value, e.g. 0, \"text\", [] or {}.";
                }
              }}
              onCommit={(text) => {
                const { default: _old, ...rest } = spec;
                setState({ ...state, [field]: text.trim() === "" ? rest : { ...rest, default: JSON.parse(text) as unknown } });
              }}
            />
            {!readOnly && (
              <button type="button" aria-label={`Remove state field ${field}`} onClick={() => setState(Object.fromEntries(Object.entries(state).filter(([f]) => f !== field)))}>
                ✕
              </button>
            )}
          </div>
        ))}
        {!readOnly && (
          <div className="braid-list__add">
            <input
              className="braid-input"
              aria-label="New state field"
              placeholder="new state field"
              value={newField}
              onChange={(event) => setNewField(event.target.value)}
              onKeyDown={(event) => {
                if (event.key === "Enter") {
                  event.preventDefault();
                  addField();
                }
              }}
            />
            <button type="button" onClick={addField}>
              Add
            </button>
          </div>
        )}
        {refusal !== null && <div className="braid-field__problem braid-field__problem--error" role="alert">{refusal}</div>}
      </fieldset>
    </div>
  );
}
