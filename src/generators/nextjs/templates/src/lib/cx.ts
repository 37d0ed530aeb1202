import { type ClassValue, clsx } from "clsx";

/**
 * Class joining for the components that also run in the browser (inputs, buttons, the interactive
 * islands): clsx without tailwind-merge, which stays on the server (`cn` in utils.ts) and out of
 * the pages' JavaScript. These components keep their own classes free of conflicts with what
 * callers pass.
 */
export function cx(...inputs: ClassValue[]): string {
  return clsx(inputs);
}
