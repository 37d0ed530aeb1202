import { sidebarItem } from "@/components/app-shell";
import { LogIn, LogOut } from "@/components/icons";
import { Link } from "@/components/link";
import { sessionToken } from "@/lib/server-api";

/** The sidebar's sign-in / sign-out entry, by the session cookie; signing out is a plain form post. */
async function AuthStatus() {
  if (!(await sessionToken())) {
    return (
      <Link href="/login" className={sidebarItem} data-testid="nav-login">
        <LogIn />
        Sign in
      </Link>
    );
  }
  return (
    <form action="/logout" method="post">
      <button type="submit" className={sidebarItem} data-testid="nav-logout">
        <LogOut />
        Sign out
      </button>
    </form>
  );
}

export { AuthStatus };
