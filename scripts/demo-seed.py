"""Seeds the demo's helpdesk API with a few records through its own HTTP API (never the database),
so the first look at /docs or the frontend shows data.

Usage: demo-seed.py DEV_PID API_URL [OTHER_URL...]

Seeds only once `charter dev` (DEV_PID) is running and every service (the API and each OTHER_URL:
the Healer, the frontend) answers, so a failed start seeds nothing into whatever else holds the
port; and only into an empty store, so a restart on PostgreSQL (or a restored memory store) gets
no duplicates."""

import os
import sys
import time

import httpx

dev_pid = int(sys.argv[1])
base = sys.argv[2]
services = [f"{base}/health", *sys.argv[3:]]


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code < 500
    except httpx.HTTPError:
        return False


deadline = time.monotonic() + 30 * 60  # the first run installs and builds the frontend
while not all(answers(url) for url in services):
    if not running(dev_pid):
        sys.exit("charter dev is not running; nothing seeded")
    if time.monotonic() > deadline:
        sys.exit("the demo's services did not all come up; nothing seeded")
    time.sleep(0.5)

login = httpx.post(f"{base}/auth/login", json={"email": "admin@example.com", "password": "admin-password"})
login.raise_for_status()
client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {login.json()['access_token']}"})


existing = client.get("/customers", params={"limit": 1})
existing.raise_for_status()
if existing.json()["items"]:
    print(f"the store at {base} already holds data; not seeding again")
    sys.exit(0)


def create(path: str, body: dict) -> dict:
    r = client.post(path, json=body)
    r.raise_for_status()
    return r.json()


acme = create("/customers", {"name": "Acme Corp", "email": "it@acme.example", "company": "Acme", "plan": "enterprise"})
globex = create("/customers", {"name": "Globex", "email": "help@globex.example", "plan": "pro"})
ada = create("/agents", {"name": "Ada Lovelace", "email": "ada@example.com", "team": "engineering"})
grace = create("/agents", {"name": "Grace Hopper", "email": "grace@example.com"})
tickets = [
    ({"title": "Printer on fire", "customer_id": acme["id"], "priority": "critical", "type": "incident",
      "description": "Smoke is coming out of the second floor printer.", "assignee_id": ada["id"]}, ["in_progress"]),
    ({"title": "Invoice is wrong", "customer_id": globex["id"], "priority": "medium", "assignee_id": grace["id"]}, ["triaged"]),
    ({"title": "Password reset loops", "customer_id": acme["id"], "priority": "high", "assignee_id": grace["id"]},
     ["triaged", "in_progress"]),
    ({"title": "Add dark mode", "customer_id": globex["id"], "priority": "low", "type": "request"}, []),
    ({"title": "Duplicate request", "customer_id": acme["id"], "priority": "low"}, ["cancelled"]),
]
for body, moves in tickets:
    ticket = create("/tickets", body)
    for state in moves:
        client.put(f"/tickets/{ticket['id']}/state", json={"state": state}).raise_for_status()
print(f"seeded 2 customers, 2 agents and {len(tickets)} tickets at {base}")
