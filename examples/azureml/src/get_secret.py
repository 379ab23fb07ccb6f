"""Prints a secret of a Key Vault, read with the compute cluster's managed identity (give that
identity the "Key Vault Secrets User" role on the vault: the workspace's own, or any). The job
files put it in AML_LAUNCH_SECRET before aml-launch starts, so that only this job's launchers
get in; the secret is in no job definition and no log.

usage: python get_secret.py VAULT_URL SECRET_NAME
  (DEFAULT_IDENTITY_CLIENT_ID: a user-assigned identity's client id, where the cluster has one)
"""
import os
import sys

from azure.identity import ManagedIdentityCredential
from azure.keyvault.secrets import SecretClient

vault, name = sys.argv[1], sys.argv[2]
client_id = os.environ.get("DEFAULT_IDENTITY_CLIENT_ID")
credential = ManagedIdentityCredential(client_id=client_id) if client_id else ManagedIdentityCredential()
print(SecretClient(vault_url=vault, credential=credential).get_secret(name).value)
