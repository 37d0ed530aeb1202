import { compareText } from "../shared/text.js";
import type { DependencyEdge } from "./ir.js";

/**
 * Stable topological order by Kahn's algorithm: dependencies come first and ties are broken by
 * name, so the same contracts always give the same order. Nodes left over sit on or behind a cycle.
 */
export function topologicalOrder(nodes: readonly string[], edges: readonly DependencyEdge[]): { order: string[]; rest: string[] } {
  const deps = new Map<string, Set<string>>();
  const dependents = new Map<string, Set<string>>();
  for (const n of nodes) {
    deps.set(n, new Set());
    dependents.set(n, new Set());
  }
  for (const e of edges) {
    if (e.from === e.to || !deps.has(e.from) || !deps.has(e.to)) continue;
    deps.get(e.from)?.add(e.to);
    dependents.get(e.to)?.add(e.from);
  }
  // The smallest ready name first, kept in a binary heap: re-sorting a list after each step made
  // the order quadratic on domains of thousands of contracts.
  const ready = new MinHeap();
  for (const n of nodes) if (deps.get(n)?.size === 0) ready.push(n);
  const order: string[] = [];
  for (let n = ready.pop(); n !== undefined; n = ready.pop()) {
    order.push(n);
    for (const d of dependents.get(n) ?? []) {
      const set = deps.get(d);
      set?.delete(n);
      if (set?.size === 0) ready.push(d);
    }
  }
  const placed = new Set(order);
  return { order, rest: nodes.filter((n) => !placed.has(n)).sort(compareText) };
}

/**
 * Elementary cycles reachable among `nodes`, each reported once, starting at its smallest FQN and
 * closed by repeating it: `a -> b -> a`. Tarjan's strongly connected components find the knots;
 * one shortest cycle is reported per component so the message stays readable on big domains.
 */
export function findCycles(nodes: readonly string[], edges: readonly DependencyEdge[]): string[][] {
  const adj = new Map<string, string[]>();
  for (const n of nodes) adj.set(n, []);
  for (const e of edges) {
    if (e.from === e.to) continue;
    adj.get(e.from)?.push(e.to);
  }
  for (const list of adj.values()) list.sort(compareText);

  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  // Iterative Tarjan, so a 1,000-entity chain cannot overflow the call stack.
  for (const root of [...nodes].sort(compareText)) {
    if (idx.has(root)) continue;
    const work: { node: string; next: number }[] = [{ node: root, next: 0 }];
    idx.set(root, index);
    low.set(root, index);
    index++;
    stack.push(root);
    onStack.add(root);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; next: number };
      const succ = adj.get(frame.node) ?? [];
      if (frame.next < succ.length) {
        const w = succ[frame.next++] as string;
        if (!idx.has(w)) {
          idx.set(w, index);
          low.set(w, index);
          index++;
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, next: 0 });
        } else if (onStack.has(w)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, idx.get(w) as number));
        }
      } else {
        work.pop();
        const parent = work[work.length - 1];
        if (parent) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
        if (low.get(frame.node) === idx.get(frame.node)) {
          const comp: string[] = [];
          let w: string;
          do {
            w = stack.pop() as string;
            onStack.delete(w);
            comp.push(w);
          } while (w !== frame.node);
          if (comp.length > 1) components.push(comp.sort(compareText));
        }
      }
    }
  }
  return components.map((comp) => shortestCycle(comp, adj)).sort((a, b) => compareText(a.join(" "), b.join(" ")));
}

function shortestCycle(component: string[], adj: Map<string, string[]>): string[] {
  const members = new Set(component);
  const start = component[0] as string;
  // Breadth-first search from start back to start inside the component.
  const prev = new Map<string, string>();
  const queue: string[] = [start];
  const seen = new Set<string>([start]);
  while (queue.length > 0) {
    const n = queue.shift() as string;
    for (const w of adj.get(n) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [n];
        let cur = n;
        while (cur !== start) {
          cur = prev.get(cur) as string;
          path.push(cur);
        }
        path.reverse();
        return [...path, start];
      }
      if (!seen.has(w)) {
        seen.add(w);
        prev.set(w, n);
        queue.push(w);
      }
    }
  }
  return [...component, start];
}

/** A binary min-heap of strings in `compareText` order. */
class MinHeap {
  private readonly items: string[] = [];

  push(value: string): void {
    const a = this.items;
    let i = a.push(value) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (compareText(a[parent] as string, value) <= 0) break;
      a[i] = a[parent] as string;
      i = parent;
    }
    a[i] = value;
  }

  pop(): string | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (top === undefined || last === undefined || a.length === 0) return top;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= a.length) break;
      const r = l + 1;
      const c = r < a.length && compareText(a[r] as string, a[l] as string) < 0 ? r : l;
      if (compareText(a[c] as string, last) >= 0) break;
      a[i] = a[c] as string;
      i = c;
    }
    a[i] = last;
    return top;
  }
}
