"use client";

import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { sidebarItem } from "@/components/app-shell";
import { LogIn, LogOut } from "@/components/icons";
import { Link } from "@/components/link";
import { getToken, setToken } from "@/lib/api";

/** The sidebar's sign-in / sign-out entry; follows the stored token across tabs and logins. */
function AuthStatus() {
  const router = useRouter();
  const [signedIn, setSignedIn] = useState(false);
  useEffect(() => {
    const update = () => setSignedIn(getToken() !== null);
    update();
    window.addEventListener("charter-auth", update);
    window.addEventListener("storage", update);
    return () => {
      window.removeEventListener("charter-auth", update);
      window.removeEventListener("storage", update);
    };
  }, []);
  if (!signedIn) {
    return (
      <Link href="/login" className={sidebarItem} data-testid="nav-login">
        <LogIn />
        Sign in
      </Link>
    );
  }
  return (
    <button
      type="button"
      className={sidebarItem}
      data-testid="nav-logout"
      onClick={() => {
        setToken(null);
        router.push("/login");
      }}
    >
      <LogOut />
      Sign out
    </button>
  );
}

export { AuthStatus };
