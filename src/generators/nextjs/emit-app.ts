import { headingOf } from "./emit-entity.js";
import type { FrontendModel, UiPage } from "./model.js";
import { fitBreak, fitElementProp, fitList, prop, sortImports, str } from "./source.js";

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
 * without a flash of the other one. Kept in one line: it is inlined into every page.
 */
const THEME_SCRIPT =
  'try{var t=localStorage.getItem("charter.theme"),d=t?t==="dark":matchMedia("(prefers-color-scheme: dark)").matches;document.documentElement.classList.toggle("dark",d)}catch(e){}';

export function renderLayout(model: FrontendModel): string {
  return `import type { Metadata } from "next";
import type { ReactNode } from "react";

import { AppSidebar } from "@/components/app-sidebar";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: ${str(model.title)}, template: ${str(`%s · ${model.title}`)} },
  description: ${str(`${model.title} administration, generated from contracts by charter.`)},
};

/** Applies the stored or the system's theme before the first paint (no flash of the other theme). */
${fitBreak("", "const themeScript =", `'${THEME_SCRIPT}';`)}

export default function RootLayout({ children }: Readonly<{ children: ReactNode }>) {
  return (
    // The theme script sets the class before React hydrates.
    <html lang="en" suppressHydrationWarning>
      <head>
        {/* biome-ignore lint/security/noDangerouslySetInnerHtml: a constant script, no user input */}
        <script dangerouslySetInnerHTML={{ __html: themeScript }} />
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
  const icons = [...new Set(["LayoutDashboard", ...items.map((i) => i.icon)])].sort();
  const rows = [
    `    { title: "Dashboard", url: "/", icon: LayoutDashboard, testId: "nav-dashboard" },`,
    ...items.map((i) => `    { title: ${str(i.title)}, url: ${str(i.url)}, icon: ${i.icon}, testId: ${str(`nav-${i.id}`)} },`),
  ];
  return `"use client";

import type { ReactNode } from "react";

import { AppShell, type Nav } from "@/components/app-shell";
${model.auth ? 'import { AuthStatus } from "@/components/auth-status";\n' : ""}${fitList("", "import ", icons, ' from "@/components/icons";', "{}")}

/** Navigation: the dashboard, then one link per Page contract. */
const nav: Nav = {
  title: ${str(model.title)},
  items: [
${rows.join("\n")}
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
  const rows = cards.map(({ c, page, icon }) =>
    fitList(
      "  ",
      "",
      [
        `key: ${str(c.entity.name)}`,
        `title: ${str(page?.page.title ?? c.entity.labelPlural)}`,
        `href: ${page ? str(page.route) : "null"}`,
        `icon: ${icon}`,
        `count: () => ${c.name}.list(1, 0).then((r) => r.total)`,
      ],
      ",",
      "{}",
    ),
  );
  return `"use client";

${fitList("", "import ", icons, ' from "@/components/icons";', "{}")}
import { Link } from "@/components/link";

import { PageHeader } from "@/components/page-header";
import { ErrorState } from "@/components/page-state";
import { Card, CardAction, CardDescription, CardHeader, CardTitle } from "@/components/ui/card";
import { useAsync } from "@/hooks/use-async";
${fitList("", "import ", [...clients, "toApiError"], ' from "@/lib/api";', "{}")}

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
  const react = p.kanban ? "lazy, Suspense" : "Suspense";
  const imports = [
    `import { ${react} } from "react";`,
    'import { ListView } from "@/components/list-view";',
    'import { PageHeader } from "@/components/page-header";',
    'import { LoadingState } from "@/components/page-state";',
    `import { ${filters.length > 0 ? `${ui.camel}Fields, ` : ""}${ui.camel}References } from "@/components/${ui.kebab}/${ui.kebab}-fields";`,
    ...(uniqueViews.includes("table") ? [componentImport(p, "Table")] : []),
    `import { ${ui.client.name} } from "@/lib/api";`,
  ];
  const lazyBoard = p.kanban
    ? `\n// The board and its drag-and-drop library load only when the board is shown.
const load${T}Kanban = () => import("@/components/${ui.kebab}/${ui.kebab}-kanban");
const ${T}Kanban = lazy(() => load${T}Kanban().then((m) => ({ default: m.${T}Kanban })));
`
    : "";
  const renderers = [
    ...(uniqueViews.includes("table")
      ? [
          fitElementProp("        ", "renderTable", "(rows, sorting)", `${T}Table`, [
            "rows={rows}",
            `columns={[${columns.map(str).join(", ")}]}`,
            "sorting={sorting}",
          ]),
        ]
      : []),
    ...(p.kanban
      ? [
          `        renderKanban={(rows) => (
          <Suspense fallback={<LoadingState />}>
            <${T}Kanban rows={rows} cardFields={[${cardFields.map(str).join(", ")}]} />
          </Suspense>
        )}`,
          `        preloadKanban={load${T}Kanban}`,
        ]
      : []),
  ];
  return `"use client";

${sortImports(imports)}
${lazyBoard}
export default function ${p.component}Page() {
  // The list keeps its state in the URL's search params, which are known only in the browser; the
  // server-rendered page shows its heading meanwhile.
  return (
    <Suspense
      fallback={
        <div className="space-y-6">
          <PageHeader title=${str(p.page.title)} />
          <LoadingState />
        </div>
      }
    >
      <ListView
        title=${str(p.page.title)}
        entityLabel=${str(ui.entity.label)}
        entityLabelPlural=${str(ui.entity.labelPlural)}
        newHref=${str(`${p.route}/new`)}
        views={[${uniqueViews.map(str).join(", ")}]}
        defaultView=${str(p.defaultView)}
        filters={[${filters.join(", ")}]}
        references={${ui.camel}References}
        load={(limit, offset, query) => ${ui.client.name}.list(limit, offset, query)}
${renderers.join("\n")}
      />
    </Suspense>
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
  const label = p.ui.entity.label;
  return `"use client";

${sortImports([
  'import { ArrowLeft } from "@/components/icons";',
  'import { Link } from "@/components/link";',
  'import { useRouter } from "next/navigation";',
  componentImport(p, "Form"),
  'import { PageHeader } from "@/components/page-header";',
  'import { notify } from "@/components/toaster";',
  'import { Card, CardContent } from "@/components/ui/card";',
])}

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
          <${T}Form
            cancelHref=${str(p.route)}
            onSaved={(r) => {
              notify(\`${label} “\${${headingOf(p.ui, "r")}}” created.\`);
              router.push(${str(p.route)});
            }}
          />
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
