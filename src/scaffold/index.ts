export type { Scaffold } from "./init.js";
export { DOMAIN_FOLDERS, InvalidProjectName, scaffoldProject } from "./init.js";
