"""Clients for the API tests: token authentication, as scripts use it."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.test import Client

from curation.services.accounts import api_token_renew


def token_client(user: AbstractBaseUser) -> Client:
    """A client that sends `user`'s API token and no session cookie."""
    return Client(headers={"Authorization": f"Token {api_token_renew(user=user)}"})
