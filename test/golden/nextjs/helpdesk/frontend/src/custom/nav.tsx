// Written once by charter, now yours: charter never overwrites or removes this file.
import type { NavItem } from "@/components/app-shell";

/**
 * Your entries of the sidebar, shown after the generated ones. Put your pages under
 * src/app/(custom)/ and your components under src/custom/; charter never touches either.
 * For example, for a page in src/app/(custom)/reports/page.tsx:
 *
 *   import { LayoutDashboard } from "@/components/icons";
 *   export const customNav: readonly NavItem[] = [
 *     { title: "Reports", url: "/reports", icon: <LayoutDashboard />, testId: "nav-reports" },
 *   ];
 */
export const customNav: readonly NavItem[] = [];
