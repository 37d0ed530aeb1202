import { type ClassValue, clsx } from "clsx";

/**
 * shadcn's `cn`, composed with clsx alone. shadcn adds tailwind-merge to resolve conflicting
 * utilities passed through `className`; it costs about 8.6 kB gzip on every page, which puts each
 * route over the 150 kB First Load JS budget on Next 16 (whose runtime alone is about 132 kB). The
 * generated components therefore never pass a class that contradicts a base class.
 */
export function cn(...inputs: ClassValue[]) {
  return clsx(inputs);
}
