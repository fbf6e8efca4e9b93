"""The HTTP and socket plumbing every app shares: roles, the permission table, the API's
error shape and schema, strict JSON documents, and what every socket does. Imports no app."""
