import { type ClassValue, clsx } from "clsx";
import { createTailwindMerge } from "tailwind-merge";

/*
 * shadcn's `cn`: clsx, then tailwind-merge, so a `className` passed to a component wins over the
 * component's own utility of the same kind (`h-8` over `h-9`, `bg-muted` over `bg-card`).
 *
 * tailwind-merge's default configuration knows every Tailwind utility, and its weight on every
 * page is more than the First Load JS budget leaves beside Next.js and React.
 * `createTailwindMerge` with the groups this app's components use costs a fraction of it; a
 * utility outside these groups is kept as clsx would keep it.
 */
const any = () => true;
const isNumber = (v: string) => /^\d+(\.\d+)?$|^\[.+\]$/.test(v);
const SIZES = ["xs", "sm", "base", "lg", "xl", "2xl", "3xl", "4xl"];

const merge = createTailwindMerge(() => ({
  cacheSize: 300,
  theme: {},
  classGroups: {
    display: ["block", "inline-block", "inline", "flex", "inline-flex", "grid", "hidden", "contents"],
    position: ["static", "relative", "absolute", "fixed", "sticky"],
    "flex-direction": [{ flex: ["row", "col", "row-reverse", "col-reverse"] }],
    flex: [{ flex: ["1", "auto", "none", "initial"] }],
    items: [{ items: ["start", "end", "center", "baseline", "stretch"] }],
    justify: [{ justify: ["start", "end", "center", "between", "around"] }],
    gap: [{ gap: [any] }],
    w: [{ w: [any] }],
    h: [{ h: [any] }],
    size: [{ size: [any] }],
    "min-w": [{ "min-w": [any] }],
    "max-w": [{ "max-w": [any] }],
    p: [{ p: [any] }],
    px: [{ px: [any] }],
    py: [{ py: [any] }],
    pt: [{ pt: [any] }],
    pb: [{ pb: [any] }],
    pl: [{ pl: [any] }],
    pr: [{ pr: [any] }],
    m: [{ m: [any] }],
    mx: [{ mx: [any] }],
    my: [{ my: [any] }],
    overflow: [{ overflow: ["auto", "hidden", "visible", "scroll", "x-auto", "y-auto"] }],
    rounded: ["rounded", { rounded: [any] }],
    "border-w": ["border", { border: [isNumber] }],
    "border-w-side": [{ "border-t": [isNumber], "border-b": [isNumber], "border-l": [isNumber], "border-r": [isNumber] }],
    "border-style": [{ border: ["solid", "dashed", "dotted", "none"] }],
    "border-color": [{ border: [any] }],
    bg: [{ bg: [any] }],
    "font-size": [{ text: SIZES }],
    "text-alignment": [{ text: ["left", "center", "right"] }],
    "text-color": [{ text: [any] }],
    "font-weight": [{ font: ["normal", "medium", "semibold", "bold"] }],
    shadow: ["shadow", { shadow: [any] }],
    opacity: [{ opacity: [any] }],
    cursor: [{ cursor: [any] }],
  },
  conflictingClassGroups: {
    p: ["px", "py", "pt", "pb", "pl", "pr"],
    px: ["pl", "pr"],
    py: ["pt", "pb"],
    m: ["mx", "my"],
    size: ["w", "h"],
  },
  conflictingClassGroupModifiers: {},
  orderSensitiveModifiers: [],
}));

export function cn(...inputs: ClassValue[]) {
  return merge(clsx(inputs));
}
