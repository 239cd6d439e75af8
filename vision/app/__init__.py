"""Interfaces: the ``vision`` CLI, the REST service (``vision.app.api``) and the Gradio UI."""
