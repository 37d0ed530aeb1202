"""The caller of a request, as the route handlers see it."""

from pydantic import BaseModel


class User(BaseModel):
    id: str
    email: str
    role: str


# Who a request is when authentication is off: every route accepts it, with full rights.
ANONYMOUS = User(id="anonymous", email="anonymous@localhost", role="admin")
