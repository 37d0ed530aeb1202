import type { FrontendModel, UiPage } from "./model.js";
import { prop, str } from "./source.js";

/**
 * Entity `icon` names are Lucide names. The app ships the icons of templates/src/components/icons.tsx
 * (inlined SVG, no icon library); a name outside that set gets the folder icon.
 */
const ICONS: Readonly<Record<string, string>> = {
  activity: "Activity",
  bell: "Bell",
  "book-open": "BookOpen",
  box: "Box",
  briefcase: "Briefcase",
  building: "Building",
  calendar: "Calendar",
  "clipboard-list": "ClipboardList",
  "credit-card": "CreditCard",
  database: "Database",
  "file-text": "FileText",
  folder: "Folder",
  headset: "Headset",
  inbox: "Inbox",
  kanban: "Kanban",
  layers: "Layers",
  "list-todo": "ListTodo",
  mail: "Mail",
  "message-square": "MessageSquare",
  package: "Package",
  settings: "Settings",
  "shopping-cart": "ShoppingCart",
  star: "Star",
  tag: "Tag",
  ticket: "Ticket",
  truck: "Truck",
  user: "User",
  users: "Users",
};

export function iconOf(icon: string | null): string {
  return (icon && ICONS[icon]) || "Folder";
}

export function renderLayout(model: FrontendModel): string {
  return `import type { Metadata } from "next";
import type { ReactNode } from "react";

import { AppSidebar } from "@/components/app-sidebar";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: ${str(model.title)}, template: ${str(`%s · ${model.title}`)} },
  description: ${str(`${model.title} administration, generated from contracts by charter.`)},
};

export default function RootLayout({ children }: Readonly<{ children: ReactNode }>) {
  return (
    <html lang="en">
      <body className="font-sans">
        <div className="flex min-h-svh">
          <AppSidebar />
          <main className="min-w-0 flex-1">
            <div className="w-full px-6 py-8 lg:px-10">{children}</div>
          </main>
        </div>
      </body>
    </html>
  );
}
`;
}

export function renderSidebar(model: FrontendModel): string {
  const items = model.pages.map((p) => ({ title: p.page.title, url: p.route, icon: iconOf(p.ui.entity.icon), id: p.page.name }));
  const icons = [...new Set(["LayoutDashboard", ...items.map((i) => i.icon)])].sort();
  const rows = [
    `    { title: "Dashboard", url: "/", icon: LayoutDashboard, testId: "nav-dashboard" },`,
    ...items.map((i) => `    { title: ${str(i.title)}, url: ${str(i.url)}, icon: ${i.icon}, testId: ${str(`nav-${i.id}`)} },`),
  ];
  const initial = model.title.charAt(0).toUpperCase() || "C";
  return `"use client";

import { ${icons.join(", ")} } from "@/components/icons";
import Link from "next/link";
import { usePathname } from "next/navigation";
${model.auth ? '\nimport { AuthStatus } from "@/components/auth-status";' : "\n"}import { cn } from "@/lib/utils";

/** Navigation: the dashboard, then one link per Page contract. */
const nav = {
  title: ${str(model.title)},
  items: [
${rows.join("\n")}
  ],
};

/** Active by path prefix: a page's link stays active on its detail and create pages. */
function isActive(pathname: string, url: string): boolean {
  if (url === "/") return pathname === "/";
  return pathname === url || pathname.startsWith(\`\${url}/\`);
}

export function AppSidebar() {
  const pathname = usePathname() ?? "/";
  return (
    <aside
      data-testid="app-sidebar"
      className="bg-sidebar text-sidebar-foreground border-sidebar-border sticky top-0 flex h-svh w-64 shrink-0 flex-col border-r"
    >
      <div className="flex h-16 items-center gap-3 border-b px-5">
        <div className="bg-sidebar-primary text-sidebar-primary-foreground flex size-8 items-center justify-center rounded-lg text-sm font-semibold">
          ${initial}
        </div>
        <div className="leading-tight">
          <div className="text-sm font-semibold">{nav.title}</div>
          <div className="text-muted-foreground text-xs">Admin</div>
        </div>
      </div>
      <nav className="flex-1 space-y-1 overflow-y-auto p-3">
        <div className="text-muted-foreground px-3 pt-1 pb-2 text-xs font-medium">Pages</div>
        {nav.items.map((item) => {
          const active = isActive(pathname, item.url);
          return (
            <Link
              key={item.url}
              href={item.url}
              data-testid={item.testId}
              data-active={active ? "true" : "false"}
              aria-current={active ? "page" : undefined}
              className={cn(
                "flex h-9 items-center gap-2 rounded-md px-3 text-sm transition-colors [&_svg]:size-4",
                active
                  ? "bg-sidebar-accent text-sidebar-accent-foreground font-semibold"
                  : "text-sidebar-foreground/80 hover:bg-sidebar-accent hover:text-sidebar-accent-foreground font-medium",
              )}
            >
              <item.icon />
              {item.title}
            </Link>
          );
        })}
      </nav>${model.auth ? '\n      <div className="border-t p-3">\n        <AuthStatus />\n      </div>' : ""}
    </aside>
  );
}
`;
}

/** The dashboard: one card per entity with an API, showing its record count. */
export function renderDashboard(model: FrontendModel): string {
  const cards = model.clients
    .filter((c) => c.operations.has("list"))
    .map((c) => {
      const page = model.pages.find((p) => p.ui.entity.fqn === c.entity.fqn);
      return { c, page, icon: iconOf(c.entity.icon) };
    });
  const icons = [...new Set(["ArrowRight", ...cards.map((x) => x.icon)])].sort();
  const clients = [...new Set(cards.map((x) => x.c.name))].sort();
  const rows = cards.map(
    ({ c, page, icon }) =>
      `  { key: ${str(c.entity.name)}, title: ${str(page?.page.title ?? c.entity.labelPlural)}, href: ${page ? str(page.route) : "null"}, icon: ${icon}, count: () => ${c.name}.list(1, 0).then((r) => r.total) },`,
  );
  return `"use client";

import { ${icons.join(", ")} } from "@/components/icons";
import Link from "next/link";

import { PageHeader } from "@/components/page-header";
import { ErrorState } from "@/components/page-state";
import { Card, CardAction, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { useAsync } from "@/hooks/use-async";
import { ${clients.length > 0 ? `${clients.join(", ")}, ` : ""}toApiError } from "@/lib/api";

const cards = [
${rows.join("\n")}
];

export default function DashboardPage() {
  // One small request per entity (limit 1): the count is the list's total.
  const { state, reload } = useAsync(() => Promise.allSettled(cards.map((c) => c.count())), []);
  const results = state.status === "ready" ? state.data : null;
  const failures = (results ?? []).flatMap((r) => (r.status === "rejected" ? [toApiError(r.reason)] : []));
  const down = failures.find((e) => e.status === 0 || e.status === 401);
  return (
    <div className="space-y-8">
      <PageHeader title="Dashboard" description=${str(`Records in ${model.title}`)} />
      {down ? <ErrorState error={down} onRetry={reload} /> : null}
      <div className="grid gap-4 sm:grid-cols-2 xl:grid-cols-3">
        {cards.map((c, i) => {
          const r = results?.[i];
          const value = !r ? "…" : r.status === "fulfilled" ? String(r.value) : "—";
          const body = (
            <Card className="hover:border-foreground/20 h-full transition-colors" data-testid={\`card-\${c.key}\`}>
              <CardHeader>
                <CardDescription className="flex items-center gap-2">
                  <c.icon className="size-4" />
                  {c.title}
                </CardDescription>
                <CardTitle className="text-3xl font-semibold tabular-nums" data-testid={\`count-\${c.key}\`}>
                  {value}
                </CardTitle>
                {c.href ? (
                  <CardAction>
                    <ArrowRight className="text-muted-foreground size-4" />
                  </CardAction>
                ) : null}
              </CardHeader>
              {r && r.status === "rejected" && !down ? (
                <p className="text-destructive px-6 text-sm">{toApiError(r.reason).message}</p>
              ) : null}
            </Card>
          );
          return c.href ? (
            <Link key={c.key} href={c.href} className="block">
              {body}
            </Link>
          ) : (
            <div key={c.key}>{body}</div>
          );
        })}
      </div>
    </div>
  );
}
`;
}

function componentImport(p: UiPage, suffix: string): string {
  return `import { ${p.ui.entity.className}${suffix} } from "@/components/${p.ui.kebab}/${p.ui.kebab}-${suffix.toLowerCase()}";`;
}

export function renderListPage(p: UiPage): string {
  const ui = p.ui;
  const T = ui.entity.className;
  const views = p.page.views.map((v) => v.type).filter((t) => t === "table" || (t === "kanban" && p.kanban));
  const uniqueViews = [...new Set(views.length > 0 ? views : ["table"])];
  const columns = p.table && p.table.columns.length > 0 ? p.table.columns : [ui.headingField];
  const cardFields = p.kanban && p.kanban.cardFields.length > 0 ? p.kanban.cardFields : [ui.headingField];
  const filters = p.page.filters.map((f) => prop(`${ui.camel}Fields`, f));
  const imports = [
    'import { ListView } from "@/components/list-view";',
    `import { ${ui.camel}Fields } from "@/components/${ui.kebab}/${ui.kebab}-fields";`,
    ...(p.kanban ? [componentImport(p, "Kanban")] : []),
    ...(uniqueViews.includes("table") ? [componentImport(p, "Table")] : []),
    `import { ${ui.client.name} } from "@/lib/api";`,
  ];
  const renderers = [
    ...(uniqueViews.includes("table")
      ? [`      renderTable={(rows) => <${T}Table rows={rows} columns={[${columns.map(str).join(", ")}]} />}`]
      : []),
    ...(p.kanban ? [`      renderKanban={(rows) => <${T}Kanban rows={rows} cardFields={[${cardFields.map(str).join(", ")}]} />}`] : []),
  ];
  return `"use client";

${imports.join("\n")}

export default function ${p.component}Page() {
  return (
    <ListView
      title=${str(p.page.title)}
      entityLabel=${str(ui.entity.label)}
      entityLabelPlural=${str(ui.entity.labelPlural)}
      newHref=${str(`${p.route}/new`)}
      views={[${uniqueViews.map(str).join(", ")}]}
      defaultView=${str(p.defaultView)}
      filters={[${filters.join(", ")}]}
      load={(limit, offset, filters) => ${ui.client.name}.list(limit, offset, filters)}
${renderers.join("\n")}
    />
  );
}
`;
}

export function renderDetailPage(p: UiPage): string {
  const T = p.ui.entity.className;
  return `"use client";

import { useParams } from "next/navigation";

${componentImport(p, "Detail")}

export default function ${p.component}DetailPage() {
  const params = useParams<{ id: string }>();
  return <${T}Detail id={params.id} />;
}
`;
}

export function renderCreatePage(p: UiPage): string {
  const T = p.ui.entity.className;
  return `"use client";

import { ArrowLeft } from "@/components/icons";
import Link from "next/link";
import { useRouter } from "next/navigation";

${componentImport(p, "Form")}
import { PageHeader } from "@/components/page-header";
import { Card, CardContent } from "@/components/ui/card";

export default function ${p.component}CreatePage() {
  const router = useRouter();
  return (
    <div className="space-y-6">
      <Link href=${str(p.route)} className="text-muted-foreground hover:text-foreground inline-flex items-center gap-1 text-sm">
        <ArrowLeft className="size-4" />
        {${str(p.page.title)}}
      </Link>
      <PageHeader title=${str(`New ${p.ui.entity.label.toLowerCase()}`)} description="Fields marked * are required." />
      <Card>
        <CardContent>
          <${T}Form cancelHref=${str(p.route)} onSaved={() => router.push(${str(p.route)})} />
        </CardContent>
      </Card>
    </div>
  );
}
`;
}

/** Server layout of a page's folder, only to give its routes a document title. */
export function renderPageLayout(p: UiPage): string {
  return `import type { Metadata } from "next";
import type { ReactNode } from "react";

export const metadata: Metadata = { title: ${str(p.page.title)} };

export default function ${p.component}Layout({ children }: Readonly<{ children: ReactNode }>) {
  return children;
}
`;
}
