/** The flows list: search, create, duplicate, import (validated first), export and delete. */

import { useId, useMemo, useState } from "react";
import { GraphFormatError, parseGraph, parseJsonText } from "../graph/parse";
import { GRAPH_FORMAT, type GraphDocument } from "../graph/types";
import { absoluteTime, api, errorText, flowPath, type FlowRecord, type Problem, relativeTime, type Report } from "./api";

export interface FlowRow {
  slug: string;
  name: string;
  owner: string;
  updated_at: string;
  latest_version: number | null;
  published_by: string | null;
  published_at: string | null;
}

const SLUG = /^[-a-zA-Z0-9_]+$/;

function slugify(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 100);
}

function editorUrl(slug: string): string {
  return `/flows/${encodeURIComponent(slug)}/`;
}

function matches(row: FlowRow, query: string): boolean {
  const q = query.trim().toLowerCase();
  return q === "" || row.name.toLowerCase().includes(q) || row.slug.includes(q) || row.owner.toLowerCase().includes(q);
}

export function FlowsList({ initial, canEdit }: { initial: FlowRow[]; canEdit: boolean }) {
  const [rows, setRows] = useState(initial);
  const [query, setQuery] = useState("");
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [panel, setPanel] = useState<"none" | "create" | "import">("none");
  const shown = useMemo(() => rows.filter((row) => matches(row, query)), [rows, query]);
  const searchId = useId();

  const duplicate = async (row: FlowRow) => {
    try {
      const source = await api<FlowRecord>("GET", flowPath(row.slug));
      const taken = new Set(rows.map((r) => r.slug));
      let slug = `${row.slug}-copy`;
      for (let n = 2; taken.has(slug); n += 1) slug = `${row.slug}-copy-${n}`;
      const name = `${row.name} (copy)`;
      const made = await api<FlowRecord>("POST", "/api/flows/", { slug, name, draft: { ...source.draft, name } });
      setRows((current) => [...current, { slug: made.slug, name: made.name, owner: made.owner, updated_at: made.updated_at, latest_version: null, published_by: null, published_at: null }].sort((a, b) => a.slug.localeCompare(b.slug)));
      setMessage({ text: `Duplicated ${row.slug} as ${made.slug} (a draft, not published).`, error: false });
    } catch (error) {
      setMessage({ text: `Could not duplicate ${row.slug}: ${errorText(error)}`, error: true });
    }
  };

  const remove = async (row: FlowRow) => {
    if (!window.confirm(`Delete ${row.name} (${row.slug}) and all its versions? This cannot be undone.`)) return;
    try {
      await api("DELETE", flowPath(row.slug));
      setRows((current) => current.filter((r) => r.slug !== row.slug));
      setMessage({ text: `Deleted ${row.slug}.`, error: false });
    } catch (error) {
      setMessage({ text: `Not deleted: ${errorText(error)}.`, error: true });
    }
  };

  return (
    <div className="braid-flows">
      <div className="braid-flows__bar">
        <h1>Flows</h1>
        <label htmlFor={searchId} className="braid-visually-hidden">
          Search flows
        </label>
        <input id={searchId} className="braid-input braid-flows__search" type="search" placeholder="Search by name, slug or owner" value={query} onChange={(event) => setQuery(event.target.value)} />
        {canEdit && (
          <>
            <button type="button" className="braid-primary" aria-expanded={panel === "create"} onClick={() => setPanel(panel === "create" ? "none" : "create")}>
              New flow
            </button>
            <button type="button" aria-expanded={panel === "import"} onClick={() => setPanel(panel === "import" ? "none" : "import")}>
              Import JSON
            </button>
          </>
        )}
      </div>
      {panel === "create" && <CreateForm taken={new Set(rows.map((r) => r.slug))} />}
      {panel === "import" && <ImportForm />}
      {message !== null && (
        <p className={message.error ? "braid-message braid-message--error" : "braid-message"} role={message.error ? "alert" : "status"}>
          {message.text}
        </p>
      )}
      {rows.length === 0 ? (
        <p className="braid-empty">No flows yet. {canEdit ? "Create one with “New flow”, or import a JSON document." : "An analyst creates them."}</p>
      ) : shown.length === 0 ? (
        <p className="braid-empty">No flow matches “{query}”. Clear the search to see all {rows.length}.</p>
      ) : (
        <div className="braid-table-wrap">
          <table className="braid-flows__table">
            <thead>
              <tr>
                <th scope="col">Flow</th>
                <th scope="col">Owner</th>
                <th scope="col">Published</th>
                <th scope="col">Draft saved</th>
                <th scope="col">
                  <span className="braid-visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((row) => (
                <tr key={row.slug}>
                  <td>
                    <a href={editorUrl(row.slug)}>{row.name}</a> <code>{row.slug}</code>
                  </td>
                  <td>{row.owner}</td>
                  <td>
                    {row.latest_version === null ? (
                      "draft only"
                    ) : (
                      <>
                        v{row.latest_version} by {row.published_by},{" "}
                        <span title={absoluteTime(row.published_at!)}>{relativeTime(row.published_at!)}</span>
                      </>
                    )}
                  </td>
                  <td>
                    <span title={absoluteTime(row.updated_at)}>{relativeTime(row.updated_at)}</span>
                  </td>
                  <td>
                    <div className="braid-flows__actions">
                    <a className="braid-button" href={flowPath(row.slug, "export/")} download={`${row.slug}.json`} aria-label={`Export ${row.slug} as JSON`}>
                      Export
                    </a>
                    {canEdit && (
                      <>
                        <button type="button" onClick={() => void duplicate(row)} aria-label={`Duplicate ${row.slug}`}>
                          Duplicate
                        </button>
                        <button type="button" className="braid-danger" onClick={() => void remove(row)} aria-label={`Delete ${row.slug}`}>
                          Delete
                        </button>
                      </>
                    )}
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function CreateForm({ taken }: { taken: Set<string> }) {
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [slugEdited, setSlugEdited] = useState(false);
  const [error, setError] = useState("");
  const shownSlug = slugEdited ? slug : slugify(name);
  const submit = async () => {
    if (name.trim() === "") return setError("Give the flow a name.");
    if (!SLUG.test(shownSlug)) return setError("The slug takes letters, digits, - and _ only.");
    if (taken.has(shownSlug)) return setError(`A flow with the slug ${shownSlug} exists; choose another.`);
    const draft: GraphDocument = { format: GRAPH_FORMAT, name: name.trim(), nodes: [], edges: [] };
    try {
      await api("POST", "/api/flows/", { slug: shownSlug, name: name.trim(), draft });
      window.location.assign(editorUrl(shownSlug));
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  return (
    <form
      className="braid-flows__form"
      aria-label="New flow"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <div className="braid-field">
        <label htmlFor="new-flow-name">Name</label>
        <input id="new-flow-name" className="braid-input" value={name} onChange={(event) => setName(event.target.value)} autoFocus />
      </div>
      <div className="braid-field">
        <label htmlFor="new-flow-slug">Slug (its address)</label>
        <input
          id="new-flow-slug"
          className="braid-input"
          value={shownSlug}
          onChange={(event) => {
            setSlugEdited(true);
            setSlug(event.target.value);
          }}
        />
      </div>
      <button type="submit" className="braid-primary">
        Create and open
      </button>
      {error !== "" && (
        <p className="braid-message braid-message--error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

function ProblemList({ problems }: { problems: Problem[] }) {
  return (
    <ul className="braid-flows__problems">
      {problems.map((problem, index) => (
        <li key={index}>
          <span aria-hidden="true">{problem.severity === "error" ? "✖ " : "⚠ "}</span>
          {problem.node !== null && <code>{problem.node}</code>} {problem.message}
        </li>
      ))}
    </ul>
  );
}

function ImportForm() {
  const [text, setText] = useState("");
  const [slug, setSlug] = useState("");
  const [replace, setReplace] = useState(false);
  const [report, setReport] = useState<Report | null>(null);
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setError("");
    setReport(null);
    let doc: GraphDocument;
    try {
      doc = parseGraph(parseJsonText(text, "The pasted text"));
    } catch (failure) {
      setError(failure instanceof GraphFormatError ? failure.message : String(failure));
      return;
    }
    setBusy(true);
    try {
      const checked = await api<Report>("POST", "/api/flows/import/check/", { graph: doc });
      setReport(checked);
      if (!checked.ok) {
        setError(`Not imported: the document has ${checked.errors.length} error(s). Fix them in the file and try again.`);
        return;
      }
      const target = slug.trim() || slugify(doc.name ?? "");
      const made = await api<FlowRecord>("POST", "/api/flows/import/", { graph: doc, ...(target ? { slug: target } : {}), replace });
      window.location.assign(editorUrl(made.slug));
    } catch (failure) {
      setError(`Not imported: ${errorText(failure)}`);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className="braid-flows__form"
      aria-label="Import JSON"
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      <div className="braid-field">
        <label htmlFor="import-file">A braid.graph/1 file</label>
        <input
          id="import-file"
          type="file"
          accept="application/json,.json"
          onChange={(event) => {
            const file = event.target.files?.[0];
            if (file) void file.text().then(setText);
          }}
        />
      </div>
      <div className="braid-field">
        <label htmlFor="import-text">or paste the JSON</label>
        <textarea id="import-text" className="braid-input braid-input--mono" rows={6} value={text} onChange={(event) => setText(event.target.value)} />
      </div>
      <div className="braid-field">
        <label htmlFor="import-slug">Slug (empty: from the document's name)</label>
        <input id="import-slug" className="braid-input" value={slug} onChange={(event) => setSlug(event.target.value)} />
      </div>
      <label className="braid-check">
        <input type="checkbox" checked={replace} onChange={(event) => setReplace(event.target.checked)} /> If the slug exists, make this its draft (the old draft is kept in its history)
      </label>
      <button type="submit" className="braid-primary" disabled={busy || text.trim() === ""}>
        {busy ? "Checking…" : "Validate and import"}
      </button>
      {error !== "" && (
        <p className="braid-message braid-message--error" role="alert">
          {error}
        </p>
      )}
      {report !== null && report.errors.length + report.warnings.length > 0 && <ProblemList problems={[...report.errors, ...report.warnings]} />}
    </form>
  );
}
