"""Clients for the API tests: token authentication, as scripts use it."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.test import Client

from curation.services.accounts import api_token_create


def api_key(user: AbstractBaseUser) -> str:
    """A new API key of `user`, as their account page shows it once."""
    return api_token_create(user=user, name="tests")[1]


def token_client(user: AbstractBaseUser) -> Client:
    """A client that sends `user`'s API token and no session cookie."""
    return Client(headers={"Authorization": f"Token {api_key(user)}"})
