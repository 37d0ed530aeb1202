import { checkDomain } from "./src/compiler/index.ts";
import { formatFinding } from "./src/contracts/index.ts";

const r = checkDomain(process.argv[2] ?? "examples/helpdesk");
for (const f of r.findings) console.log(formatFinding(f));
console.log(r.errors, r.warnings, r.ir?.summary, r.ir?.graph.order);
if (process.argv[3]) console.log(JSON.stringify(r.ir, null, 1).slice(0, 6000));
