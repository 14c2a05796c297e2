/** Renderer entry: pick the API for this page, build the store, mount the app. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { pickApi } from './api/pick-api.js';
import { createAppStore, StoreContext } from './store/app-store.js';
import { App } from './components/app.js';
import './styles.css';

const root = createRoot(document.getElementById('root')!);
const choice = pickApi();
if (choice.api) {
  const store = createAppStore(choice.api);
  // Asked for before the first render: the first rows wait on these requests, not on React drawing the frame
  // around them (the app's mount asks again, and is given the same load).
  void store.getState().init();
  root.render(
    <StrictMode>
      <StoreContext.Provider value={store}>
        <App />
      </StoreContext.Provider>
    </StrictMode>,
  );
} else {
  root.render(
    <div className="main-empty" role="alert">
      <h1>Waystation cannot reach its host</h1>
      <p>{choice.problem}</p>
    </div>,
  );
}
