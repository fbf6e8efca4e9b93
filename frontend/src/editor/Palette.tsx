/** The palette of node types (drag onto the canvas, or click/Enter) and the quick-add search box. */

import { type RefObject, useId, useState } from "react";
import { NODE_DESCRIPTIONS } from "../designer/ops";
import { NODE_TYPES, type NodeType } from "../graph/types";
import { NodeIcon } from "../nodes/NodeIcon";

export function Palette({ onAdd }: { onAdd: (type: NodeType) => void }) {
  return (
    <nav className="braid-palette" aria-label="Node palette">
      <h2>Add a node</h2>
      <p className="braid-palette__hint">Drag onto the canvas, or press Enter on one.</p>
      <ul>
        {NODE_TYPES.map((type) => (
          <li key={type}>
            <button
              type="button"
              className="braid-palette__item"
              draggable
              data-node-type={type}
              title={NODE_DESCRIPTIONS[type]}
              onDragStart={(event) => {
                event.dataTransfer.setData("application/x-braid-node", type);
                event.dataTransfer.effectAllowed = "copy";
              }}
              onClick={() => onAdd(type)}
            >
              <span className="braid-palette__icon" aria-hidden="true">
                <NodeIcon type={type} />
              </span>
              <span className="braid-palette__text">
                <span className="braid-palette__name">
                  <span className="visually-hidden">Add </span>
                  {type}
                </span>
                <span className="braid-palette__description">{NODE_DESCRIPTIONS[type]}</span>
              </span>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** Types whose name or description contains the query, names first. */
export function matchTypes(query: string): NodeType[] {
  const q = query.trim().toLowerCase();
  if (q === "") return [...NODE_TYPES];
  const byName = NODE_TYPES.filter((type) => type.startsWith(q));
  const rest = NODE_TYPES.filter((type) => !byName.includes(type) && (type.includes(q) || NODE_DESCRIPTIONS[type].toLowerCase().includes(q)));
  return [...byName, ...rest];
}

export function QuickAdd({ onAdd, inputRef }: { onAdd: (type: NodeType) => void; inputRef: RefObject<HTMLInputElement | null> }) {
  const [query, setQuery] = useState("");
  const [active, setActive] = useState(0);
  const [open, setOpen] = useState(false);
  const listId = useId();
  const matches = matchTypes(query);
  const choose = (type: NodeType | undefined) => {
    if (type === undefined) return;
    onAdd(type);
    setQuery("");
    setActive(0);
    setOpen(false);
    inputRef.current?.blur();
  };
  return (
    <div className="braid-quickadd">
      <input
        ref={inputRef}
        className="braid-input"
        role="combobox"
        aria-expanded={open && matches.length > 0}
        aria-controls={listId}
        aria-activedescendant={open && matches[active] ? `${listId}-${matches[active]}` : undefined}
        aria-label="Quick add a node (press /)"
        placeholder="Quick add… (/)"
        value={query}
        onFocus={() => setOpen(true)}
        onBlur={() => window.setTimeout(() => setOpen(false), 150)}
        onChange={(event) => {
          setQuery(event.target.value);
          setActive(0);
          setOpen(true);
        }}
        onKeyDown={(event) => {
          if (event.key === "ArrowDown") {
            event.preventDefault();
            setActive((a) => Math.min(a + 1, matches.length - 1));
          } else if (event.key === "ArrowUp") {
            event.preventDefault();
            setActive((a) => Math.max(a - 1, 0));
          } else if (event.key === "Enter") {
            event.preventDefault();
            choose(matches[active]);
          } else if (event.key === "Escape") {
            setQuery("");
            setOpen(false);
            inputRef.current?.blur();
          }
        }}
      />
      {open && matches.length > 0 && (
        <ul id={listId} role="listbox" className="braid-quickadd__list" aria-label="Node types">
          {matches.map((type, index) => (
            <li
              key={type}
              id={`${listId}-${type}`}
              role="option"
              aria-selected={index === active}
              onMouseDown={(event) => {
                event.preventDefault();
                choose(type);
              }}
            >
              <span className="braid-quickadd__icon" aria-hidden="true"><NodeIcon type={type} size={16} /></span>
              <strong>{type}</strong> <span className="braid-palette__description">{NODE_DESCRIPTIONS[type]}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
