"""HTTP plumbing shared by the pages and the API: addresses, middleware, the error renderer."""
