/** Small form controls for the side panel: text commits on blur or Enter, so one edit is one undo step. */

import { type KeyboardEvent, useEffect, useId, useState } from "react";
import type { Problem } from "./api";

/** The line of `source` a position points into, and a caret under its column. */
function caret(source: string, line: number, column: number): [string, string] | null {
  const text = source.split("\n")[line - 1];
  if (text === undefined) return null;
  return [text, `${" ".repeat(Math.max(0, column - 1))}^`];
}

export function FieldProblems({ problems, source }: { problems: Problem[]; source?: string }) {
  if (problems.length === 0) return null;
  return (
    <ul className="braid-field__problems">
      {problems.map((problem, index) => (
        <li key={index} className={`braid-field__problem braid-field__problem--${problem.severity}`}>
          <span aria-hidden="true">{problem.severity === "error" ? "✖ " : "⚠ "}</span>
          {problem.position !== null && (
            <span className="braid-field__position">
              line {problem.position.line}, column {problem.position.column}:{" "}
            </span>
          )}
          {problem.message}
          {source !== undefined && problem.position !== null && problem.field !== null && (() => {
            const marked = caret(source, problem.position.line, problem.position.column);
            return marked === null ? null : (
              <pre className="braid-field__caret" aria-hidden="true">
                {marked[0]}
                {"\n"}
                {marked[1]}
              </pre>
            );
          })()}
        </li>
      ))}
    </ul>
  );
}

interface TextFieldProps {
  label: string;
  value: string;
  onCommit: (value: string) => void;
  problems?: Problem[];
  mono?: boolean;
  multiline?: boolean;
  disabled?: boolean;
  placeholder?: string;
  hint?: string;
  /** Return a reason to refuse the value (shown beside the field), or null. */
  check?: (value: string) => string | null;
}

export function TextField({ label, value, onCommit, problems = [], mono, multiline, disabled, placeholder, hint, check }: TextFieldProps) {
  const id = useId();
  const [text, setText] = useState(value);
  const [refusal, setRefusal] = useState<string | null>(null);
  useEffect(() => setText(value), [value]);
  const commit = () => {
    if (text === value) return;
    const reason = check?.(text) ?? null;
    setRefusal(reason);
    if (reason === null) onCommit(text);
  };
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === "Enter" && !(multiline && event.shiftKey)) {
      event.preventDefault();
      commit();
    } else if (event.key === "Escape") {
      setText(value);
      setRefusal(null);
    }
  };
  const shared = {
    id,
    value: text,
    disabled,
    placeholder,
    className: mono ? "braid-input braid-input--mono" : "braid-input",
    onBlur: commit,
    onKeyDown,
    "aria-invalid": refusal !== null || problems.some((p) => p.severity === "error"),
  };
  return (
    <div className="braid-field">
      <label htmlFor={id}>{label}</label>
      {multiline ? (
        <textarea {...shared} rows={3} onChange={(event) => setText(event.target.value)} />
      ) : (
        <input {...shared} type="text" onChange={(event) => setText(event.target.value)} />
      )}
      {hint !== undefined && <div className="braid-field__hint">{hint}</div>}
      {refusal !== null && <div className="braid-field__problem braid-field__problem--error" role="alert">{refusal}</div>}
      <FieldProblems problems={problems} {...(mono ? { source: value } : {})} />
    </div>
  );
}

interface NumberFieldProps {
  label: string;
  value: number | undefined;
  onCommit: (value: number | undefined) => void;
  disabled?: boolean;
  min?: number;
  integer?: boolean;
  problems?: Problem[];
}

export function NumberField({ label, value, onCommit, disabled, min = 0, integer = true, problems = [] }: NumberFieldProps) {
  return (
    <TextField
      label={label}
      value={value === undefined ? "" : String(value)}
      disabled={disabled}
      problems={problems}
      placeholder="not set"
      check={(text) => {
        if (text.trim() === "") return null;
        const number = Number(text);
        if (!Number.isFinite(number) || (integer && !Number.isInteger(number))) return `Give ${integer ? "a whole number" : "a number"}.`;
        if (number < min) return `Give ${min} or more.`;
        return null;
      }}
      onCommit={(text) => onCommit(text.trim() === "" ? undefined : Number(text))}
    />
  );
}

interface SelectFieldProps {
  label: string;
  value: string;
  options: { value: string; label: string }[];
  onChange: (value: string) => void;
  disabled?: boolean;
  problems?: Problem[];
}

export function SelectField({ label, value, options, onChange, disabled, problems = [] }: SelectFieldProps) {
  const id = useId();
  return (
    <div className="braid-field">
      <label htmlFor={id}>{label}</label>
      <select id={id} className="braid-input" value={value} disabled={disabled} onChange={(event) => onChange(event.target.value)}>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
      <FieldProblems problems={problems} />
    </div>
  );
}

/** A list of names (fork/race branches, gather slots, approval groups) with rename, reorder, remove, add. */
export function NameListEditor({
  label,
  names,
  disabled,
  onRename,
  onMove,
  onRemove,
  onAdd,
  addLabel,
  problems = [],
  suggestions,
}: {
  label: string;
  names: string[];
  disabled?: boolean;
  onRename: (from: string, to: string) => void;
  onMove?: (name: string, by: -1 | 1) => void;
  onRemove: (name: string) => void;
  onAdd: (name: string) => void;
  addLabel: string;
  problems?: Problem[];
  /** Names offered while typing a new entry (e.g. the approval groups that exist). */
  suggestions?: string[];
}) {
  const [draft, setDraft] = useState("");
  const suggestionsId = useId();
  const [refusal, setRefusal] = useState<string | null>(null);
  const validName = (name: string, current?: string) => {
    if (!/^[A-Za-z0-9_-]+$/.test(name)) return "Use letters, digits, _ and - only.";
    if (name !== current && names.includes(name)) return `“${name}” is already in the list.`;
    return null;
  };
  const add = () => {
    const name = draft.trim();
    const reason = validName(name);
    setRefusal(reason);
    if (reason === null) {
      onAdd(name);
      setDraft("");
    }
  };
  return (
    <fieldset className="braid-list">
      <legend>{label}</legend>
      <ol>
        {names.map((name, index) => (
          <li key={`${name}-${index}`}>
            <TextField label={`${label} ${index + 1}`} value={name} disabled={disabled} check={(text) => validName(text, name)} onCommit={(to) => onRename(name, to)} />
            {!disabled && (
              <span className="braid-list__buttons">
                {onMove && (
                  <>
                    <button type="button" onClick={() => onMove(name, -1)} disabled={index === 0} aria-label={`Move ${name} up`}>
                      ↑
                    </button>
                    <button type="button" onClick={() => onMove(name, 1)} disabled={index === names.length - 1} aria-label={`Move ${name} down`}>
                      ↓
                    </button>
                  </>
                )}
                <button type="button" onClick={() => onRemove(name)} aria-label={`Remove ${name}`}>
                  ✕
                </button>
              </span>
            )}
          </li>
        ))}
      </ol>
      {!disabled && (
        <div className="braid-list__add">
          <input
            className="braid-input"
            aria-label={addLabel}
            placeholder={addLabel}
            list={suggestions && suggestions.length > 0 ? suggestionsId : undefined}
            value={draft}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === "Enter") {
                event.preventDefault();
                add();
              }
            }}
          />
          <button type="button" onClick={add}>
            Add
          </button>
          {suggestions && suggestions.length > 0 && (
            <datalist id={suggestionsId}>
              {suggestions.map((name) => (
                <option key={name} value={name} />
              ))}
            </datalist>
          )}
        </div>
      )}
      {suggestions && suggestions.length > 0 && !disabled && <div className="braid-field__hint">Groups: {suggestions.join(", ")}</div>}
      {refusal !== null && <div className="braid-field__problem braid-field__problem--error" role="alert">{refusal}</div>}
      <FieldProblems problems={problems} />
    </fieldset>
  );
}

/** Key → value rows (set values, subflow input/output). */
export function PairsEditor({
  label,
  pairs,
  keyLabel,
  valueLabel,
  disabled,
  onChange,
  problemsFor = () => [],
  keyOptions,
}: {
  label: string;
  pairs: Record<string, string>;
  keyLabel: string;
  valueLabel: string;
  disabled?: boolean;
  onChange: (pairs: Record<string, string>) => void;
  problemsFor?: (key: string) => Problem[];
  keyOptions?: string[];
}) {
  const entries = Object.entries(pairs);
  const [newKey, setNewKey] = useState("");
  const listId = useId();
  const rename = (from: string, to: string) =>
    onChange(Object.fromEntries(entries.map(([k, v]) => (k === from ? [to, v] : [k, v]))));
  return (
    <fieldset className="braid-list">
      <legend>{label}</legend>
      {entries.length === 0 && <p className="braid-empty">None yet. Add a {keyLabel} below.</p>}
      {entries.map(([key, value]) => (
        <div className="braid-pair" key={key}>
          <TextField label={keyLabel} value={key} disabled={disabled} check={(to) => (to !== key && to in pairs ? `${to} is already set here.` : to.trim() === "" ? "Give a name." : null)} onCommit={(to) => rename(key, to)} />
          <TextField label={`${valueLabel} (${key})`} value={value} mono disabled={disabled} problems={problemsFor(key)} onCommit={(to) => onChange({ ...pairs, [key]: to })} />
          {!disabled && (
            <button
              type="button"
              aria-label={`Remove ${key}`}
              onClick={() => onChange(Object.fromEntries(entries.filter(([k]) => k !== key)))}
            >
              ✕
            </button>
          )}
        </div>
      ))}
      {!disabled && (
        <div className="braid-list__add">
          <input
            className="braid-input"
            aria-label={`New ${keyLabel}`}
            placeholder={`new ${keyLabel}`}
            list={keyOptions ? listId : undefined}
            value={newKey}
            onChange={(event) => setNewKey(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === "Enter" && newKey.trim() !== "" && !(newKey.trim() in pairs)) {
                event.preventDefault();
                onChange({ ...pairs, [newKey.trim()]: "" });
                setNewKey("");
              }
            }}
          />
          {keyOptions && (
            <datalist id={listId}>
              {keyOptions.map((option) => (
                <option key={option} value={option} />
              ))}
            </datalist>
          )}
          <button
            type="button"
            onClick={() => {
              if (newKey.trim() !== "" && !(newKey.trim() in pairs)) {
                onChange({ ...pairs, [newKey.trim()]: "" });
                setNewKey("");
              }
            }}
          >
            Add
          </button>
        </div>
      )}
    </fieldset>
  );
}
