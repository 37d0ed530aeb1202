"""Seeds the demo's helpdesk API with a few records through its own HTTP API (never the database),
so the first look at /docs or the frontend shows data. Usage: demo-seed.py BASE_URL"""

import sys
import time

import httpx

base = sys.argv[1]
for _ in range(120):
    try:
        if httpx.get(f"{base}/health", timeout=1).status_code == 200:
            break
    except httpx.HTTPError:
        pass
    time.sleep(0.5)
else:
    sys.exit(f"the API at {base} did not come up")

login = httpx.post(f"{base}/auth/login", json={"email": "admin@example.com", "password": "admin-password"})
login.raise_for_status()
client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {login.json()['access_token']}"})


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
