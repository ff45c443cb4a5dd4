// The code editor: CodeMirror 6 with Python or JavaScript highlighting.
// One EditorState per (language, file) so switching tabs keeps each file's
// text, cursor and undo history.
import { EditorView, basicSetup } from 'codemirror';
import { EditorState } from '@codemirror/state';
import { python } from '@codemirror/lang-python';
import { javascript } from '@codemirror/lang-javascript';
import { keymap } from '@codemirror/view';
import { indentWithTab } from '@codemirror/commands';

const languageSupport = { python: () => python(), node: () => javascript() };

export class CodeEditor {
	/** parent: element; initialText(language, file) gives a file's first content. */
	constructor(parent, initialText) {
		this.initialText = initialText;
		this.states = new Map();
		this.view = new EditorView({ parent });
	}

	stateFor(language, file) {
		const key = `${language}/${file}`;
		if (!this.states.has(key)) {
			this.states.set(key, EditorState.create({
				doc: this.initialText(language, file),
				extensions: [basicSetup, keymap.of([indentWithTab]), languageSupport[language]()],
			}));
		}
		return this.states.get(key);
	}

	/** Shows (language, file), keeping the state of the one shown before. */
	show(language, file) {
		if (this.current) this.states.set(this.current, this.view.state);
		this.current = `${language}/${file}`;
		this.view.setState(this.stateFor(language, file));
	}

	get text() { return this.view.state.doc.toString(); }

	set text(value) {
		this.view.dispatch({ changes: { from: 0, to: this.view.state.doc.length, insert: value } });
	}
}

/** The text of (language, file), whether shown or not. */
CodeEditor.prototype.textOf = function textOf(language, file) {
	const key = `${language}/${file}`;
	if (key === this.current) return this.text;
	return this.stateFor(language, file).doc.toString();
};
