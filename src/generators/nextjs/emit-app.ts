import { ownedHeader, slashHeader } from "../header.js";
import { headingOf } from "./emit-entity.js";
import type { FrontendModel, UiPage } from "./model.js";
import { byNaturalOrder, fitBreak, fitElementProp, fitList, LINE_WIDTH, prop, sortImports, str } from "./source.js";

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

/**
 * Runs before the first paint, so the stored theme (or the system's, without one) is applied
 * without a flash of the other one; it also tells the server the browser's time zone (a cookie),
 * so date-times are rendered in it. Kept in one line: it is inlined into every page.
 */
const THEME_SCRIPT =
  'try{var t=localStorage.getItem("charter.theme"),d=t?t==="dark":matchMedia("(prefers-color-scheme: dark)").matches;document.documentElement.classList.toggle("dark",d);document.cookie="charter_tz="+encodeURIComponent(Intl.DateTimeFormat().resolvedOptions().timeZone)+";path=/;max-age=31536000;samesite=lax"}catch(e){}';

export function renderLayout(model: FrontendModel): string {
  return `import type { Metadata } from "next";
import { headers } from "next/headers";
import type { ReactNode } from "react";

import { AppSidebar } from "@/components/app-sidebar";
import "@/lib/server-api";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: ${str(model.title)}, template: ${str(`%s · ${model.title}`)} },
  description: ${str(`${model.title} administration, generated from contracts by charter.`)},
};

/** Applies the stored or the system's theme before the first paint (no flash of the other theme). */
${fitBreak("", "const themeScript =", `'${THEME_SCRIPT}';`)}

/**
 * Reading the request's nonce (src/proxy.ts) renders every page per request, which is what lets
 * Next put that nonce on its own scripts under the Content-Security-Policy.
 */
export default async function RootLayout({ children }: Readonly<{ children: ReactNode }>) {
  const nonce = (await headers()).get("x-nonce") ?? undefined;
  return (
    // The theme script sets the class before React hydrates.
    <html lang="en" suppressHydrationWarning>
      <head>
        {/* biome-ignore lint/security/noDangerouslySetInnerHtml: a constant script, no user input */}
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: themeScript }} />
      </head>
      <body className="font-sans">
        <AppSidebar>{children}</AppSidebar>
      </body>
    </html>
  );
}
`;
}

export function renderSidebar(model: FrontendModel): string {
  const items = model.pages.map((p) => ({ title: p.page.title, url: p.route, icon: iconOf(p.ui.entity.icon), id: p.page.name }));
  const icons = [...new Set(["LayoutDashboard", ...items.map((i) => i.icon)])].sort(byNaturalOrder);
  const rows = [
    `    { title: "Dashboard", url: "/", icon: <LayoutDashboard />, testId: "nav-dashboard" },`,
    ...items.map((i) => `    { title: ${str(i.title)}, url: ${str(i.url)}, icon: <${i.icon} />, testId: ${str(`nav-${i.id}`)} },`),
  ];
  return `import type { ReactNode } from "react";

import { AppShell, type Nav } from "@/components/app-shell";
${model.auth ? 'import { AuthStatus } from "@/components/auth-status";\n' : ""}${fitList("", "import ", icons, ' from "@/components/icons";', "{}")}
import { customNav } from "@/custom/nav";

/** Navigation: the dashboard, one link per Page contract, then the app's own (src/custom/nav.tsx). */
const nav: Nav = {
  title: ${str(model.title)},
  items: [
${rows.join("\n")}
    ...customNav,
  ],
};

export function AppSidebar({ children }: { children: ReactNode }) {
${
  model.auth
    ? `  return (
    <AppShell nav={nav} footer={<AuthStatus />}>
      {children}
    </AppShell>
  );`
    : "  return <AppShell nav={nav}>{children}</AppShell>;"
}
}
`;
}

/** The user's sidebar entries: written once (owned), imported by the generated sidebar. */
export const CUSTOM_NAV = "src/custom/nav.tsx";

export function renderCustomNav(): string {
  return `${ownedHeader(slashHeader)}import type { NavItem } from "@/components/app-shell";

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
`;
}

/** The dashboard (server): one card per entity with an API, showing its record count. */
export function renderDashboard(model: FrontendModel): string {
  const cards = model.clients
    .filter((c) => c.operations.has("list"))
    .map((c) => {
      const page = model.pages.find((p) => p.ui.entity.fqn === c.entity.fqn);
      return { c, page, icon: iconOf(c.entity.icon) };
    });
  const icons = [...new Set(["ArrowRight", ...cards.map((x) => x.icon)])].sort(byNaturalOrder);
  const clients = [...new Set(cards.map((x) => x.c.name))].sort(byNaturalOrder);
  const fields = cards.map(({ c, page, icon }) => [
    `key: ${str(c.entity.name)}`,
    `title: ${str(page?.page.title ?? c.entity.labelPlural)}`,
    `href: ${page ? str(page.route) : "null"}`,
    `icon: ${icon}`,
    `count: () => ${c.name}.list(1, 0).then((r) => r.total)`,
  ]);
  // biome keeps a one-card array on one line when it fits; several objects always take a line each.
  const lone = fields.length === 1 ? `const cards = [{ ${fields[0]?.join(", ")} }];` : "";
  const cardList =
    lone !== "" && lone.length <= LINE_WIDTH
      ? lone
      : `const cards = [\n${fields.map((f) => fitList("  ", "", f, ",", "{}")).join("\n")}\n];`;
  return `${fitList("", "import ", icons, ' from "@/components/icons";', "{}")}
import { Link } from "@/components/link";
import { PageHeader } from "@/components/page-header";
import { ErrorState } from "@/components/page-state";
import { Card, CardAction, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
${fitList("", "import ", [...clients, "toApiError"].sort(byNaturalOrder), ' from "@/lib/server-api";', "{}")}

${cardList}

export default async function DashboardPage() {
  // One small request per entity (limit 1): the count is the list's total.
  const results = await Promise.allSettled(cards.map((c) => c.count()));
  const failures = results.flatMap((r) => (r.status === "rejected" ? [toApiError(r.reason)] : []));
  const down = failures.find((e) => e.status === 0 || e.status === 401);
  return (
    <div className="space-y-8">
      <PageHeader title="Dashboard" description=${str(`Records in ${model.title}`)} />
      {down ? <ErrorState error={down} retry="/" /> : null}
      <div className="grid gap-4 sm:grid-cols-2 xl:grid-cols-3">
        {cards.map((c, i) => {
          const r = results[i];
          const value = r?.status === "fulfilled" && r.value !== null ? String(r.value) : "—";
          const body = (
            <Card key={c.key} className="hover:border-foreground/20 h-full transition-colors" data-testid={\`card-\${c.key}\`}>
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
  return `import { ${p.ui.type}${suffix} } from "@/components/${p.ui.kebab}/${p.ui.kebab}-${suffix.toLowerCase()}";`;
}

export function renderListPage(p: UiPage): string {
  const ui = p.ui;
  const T = ui.type;
  const views = p.page.views.map((v) => v.type).filter((t) => t === "table" || (t === "kanban" && p.kanban));
  const uniqueViews = [...new Set(views.length > 0 ? views : ["table"])];
  const columns = p.table && p.table.columns.length > 0 ? p.table.columns : [ui.headingField];
  const cardFields = p.kanban && p.kanban.cardFields.length > 0 ? p.kanban.cardFields : [ui.headingField];
  const filters = p.page.filters.map((f) => prop(`${ui.camel}Fields`, f));
  // The board gets only what it shows and moves by: the card fields, the heading, the state and
  // the field of the workflow's type overrides (the rows travel to the browser as its props).
  const override = ui.workflow?.typeOverrides?.field;
  const boardFields = [...new Set([ui.headingField, ...cardFields, "state", ...(override ? [override] : [])])].filter((f) => f !== "id");
  const shown = [...new Set([...(uniqueViews.includes("table") ? columns : []), ...(p.kanban ? cardFields : [])])].filter((f) =>
    ui.references.has(f),
  );
  const imports = [
    `import { ${["ListView", "type SearchParams"].join(", ")} } from "@/components/list-view";`,
    ...(filters.length > 0 ? [`import { ${ui.camel}Fields } from "@/components/${ui.kebab}/${ui.kebab}-fields";`] : []),
    `import { ${ui.camel}References } from "@/components/${ui.kebab}/${ui.kebab}-references";`,
    ...(uniqueViews.includes("table") ? [componentImport(p, "Table")] : []),
    ...(p.kanban ? [componentImport(p, "Board")] : []),
    ...(p.kanban ? ['import { pick } from "@/lib/schema";'] : []),
    `import { ${ui.client.name} } from "@/lib/server-api";`,
  ];
  const renderers = [
    ...(uniqueViews.includes("table")
      ? [
          fitElementProp("      ", "renderTable", "(rows, sorting, context)", `${T}Table`, [
            "rows={rows}",
            `columns={[${columns.map(str).join(", ")}]}`,
            "sorting={sorting}",
            "context={context}",
          ]),
        ]
      : []),
    ...(p.kanban
      ? [
          fitElementProp("      ", "renderKanban", "(rows, context)", `${T}Board`, [
            `rows={rows.map((r) => pick(r, [${boardFields.map(str).join(", ")}]))}`,
            `cardFields={[${cardFields.map(str).join(", ")}]}`,
            "labels={context.labels}",
          ]),
        ]
      : []),
  ];
  return `${sortImports(imports)}

/** ${p.page.title}: rendered on the server from the URL's search params (view, page, size, sort, q, filters). */
export default async function ${p.component}Page({ searchParams }: { searchParams: Promise<SearchParams> }) {
  return (
    <ListView
      title=${str(p.page.title)}
      route=${str(p.route)}
      entityLabel=${str(ui.entity.label)}
      entityLabelPlural=${str(ui.entity.labelPlural)}
      newHref=${str(`${p.route}/new`)}
      views={[${uniqueViews.map(str).join(", ")}]}
      defaultView=${str(p.defaultView)}
      filters={[${filters.join(", ")}]}
      references={${ui.camel}References}
      columnReferences={[${shown.map(str).join(", ")}]}
      searchParams={await searchParams}
      load={(limit, offset, query) => ${ui.client.name}.list(limit, offset, query)}
${renderers.join("\n")}
    />
  );
}
`;
}

export function renderDetailPage(p: UiPage, appTitle: string): string {
  const T = p.ui.type;
  const c = p.ui.client;
  return `import type { Metadata } from "next";
import { cache } from "react";

${componentImport(p, "Detail")}
import { ${c.name} } from "@/lib/server-api";

/** One request per page view: the title and the page share it. */
const load = cache((id: string) => ${c.name}.get(id));

type Props = { params: Promise<{ id: string }> };

/** The document title names the record (the layout's says only the entity). */
export async function generateMetadata({ params }: Props): Promise<Metadata> {
  const { id } = await params;
  try {
    const record = await load(id);
    return { title: { absolute: \`\${${headingOf(p.ui, "record")}} · ${p.page.title} · ${appTitle}\` } };
  } catch {
    return { title: { absolute: ${str(`${p.ui.entity.label} not found · ${appTitle}`)} } };
  }
}

export default async function ${p.component}DetailPage({ params }: Props) {
  const { id } = await params;
  return <${T}Detail id={id} load={load} />;
}
`;
}

export function renderCreatePage(p: UiPage): string {
  const T = p.ui.type;
  const refs = [...p.ui.references.keys()].filter((k) => p.ui.createFields.some((f) => f.name === k));
  const call = `loadReferences(${p.ui.camel}References, [${refs.map(str).join(", ")}])`;
  const flat = `  const [refs, zone] = await Promise.all([${call}, requestZone()]);`;
  const loads = flat.length <= LINE_WIDTH ? flat : `  const [refs, zone] = await Promise.all([\n    ${call},\n    requestZone(),\n  ]);`;
  return `${sortImports([
    'import { ArrowLeft } from "@/components/icons";',
    'import { FormIsland } from "@/components/form-island";',
    'import { Link } from "@/components/link";',
    componentImport(p, "Form"),
    `import { ${p.ui.camel}References } from "@/components/${p.ui.kebab}/${p.ui.kebab}-references";`,
    'import { PageHeader } from "@/components/page-header";',
    'import { ErrorNotice } from "@/components/page-state";',
    'import { Card, CardContent } from "@/components/ui/card";',
    'import { loadReferences } from "@/lib/references";',
    'import { requestZone } from "@/lib/server-context";',
  ])}
import "@/lib/server-api";

export default async function ${p.component}CreatePage() {
  // The reference pickers' choices, loaded on the server with the page.
${loads}
  return (
    <div className="space-y-6">
      <Link href=${str(p.route)} className="text-muted-foreground hover:text-foreground inline-flex items-center gap-1 text-sm">
        <ArrowLeft className="size-4" />
        {${str(p.page.title)}}
      </Link>
      <PageHeader title=${str(`New ${p.ui.entity.label.toLowerCase()}`)} description="Fields marked * are required." />
      {refs.error ? <ErrorNotice>Could not load the choices of a reference field: {refs.error}</ErrorNotice> : null}
      <Card>
        <CardContent>
          <${T}Form options={refs.options} zone={zone} island={FormIsland} cancelHref=${str(p.route)} />
        </CardContent>
      </Card>
    </div>
  );
}
`;
}

/** Server layout of a route folder, only to give its pages a document title of their own. */
export function renderTitleLayout(component: string, title: string): string {
  return `import type { Metadata } from "next";
import type { ReactNode } from "react";

export const metadata: Metadata = { title: ${str(title)} };

export default function ${component}Layout({ children }: Readonly<{ children: ReactNode }>) {
  return children;
}
`;
}
