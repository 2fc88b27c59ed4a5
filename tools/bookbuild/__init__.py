"""The book's build tools: the site (``make book``), the student edition (``make student``) and
the instructor notes, as one package whose modules depend on each other in one direction only.

Each module imports only modules above it in this list (``tests/test_layout.py`` checks it):

* :mod:`.toc` — where things are (the repository, ``_build``) and what the book holds (``_toc.yml``).
* :mod:`.myst` — reading MyST: fenced directives, glue roles, notebook cells.
* :mod:`.solutions` — a chapter without its solutions (MyST text or notebook).
* :mod:`.chapters` — what a chapter holds for a class: objectives, exercises and their checks, time.
* :mod:`.instructor` — the generated part of the instructor page, with the mistakes the checks recognise.
* :mod:`.stage` — the staging copy of the book and its execution with papermill.
* :mod:`.site` — Jupyter Book on an executed staging copy, warnings as errors.
* :mod:`.lite_packages` — the JupyterLite kernel's packages beside the live panels' Pyodide (after :mod:`.live`).
* :mod:`.lite` — the JupyterLite edition of a built site (``<site>/lite``): the chapters as notebooks.
* :mod:`.book` — the one build: stage, execute, site, Lite edition (``tools/build_book.py``).
* :mod:`.student` — the student edition, from an executed staging copy (``tools/build_student.py``).

Nothing is imported here, so that a module loads only what it needs.
"""
