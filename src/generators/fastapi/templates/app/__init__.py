"""The generated application package."""
